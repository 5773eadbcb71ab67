/// Carries a non-Sendable value across isolation domains where only one side ever uses it (a delegate called on
/// its own queue, a handler touched on its own event loop).
///
/// Every use needs a `// Sendable:` comment at the place it is made, saying which side uses the value and why
/// the other never does.
///
/// Public and inlinable for speed only (the target is not a product): a box made in another module through a call
/// that is not inlined costs a generic call and a metadata lookup each time, and boxes are made per callback.
// Sendable: by contract of the call site (see the type's documentation); the box adds no sharing of its own.
public struct UncheckedSendableBox<Value>: @unchecked Sendable {
    /// The carried value.
    public let value: Value

    /// Wraps `value`.
    @inlinable
    public init(_ value: Value) {
        self.value = value
    }
}
