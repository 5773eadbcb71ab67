/// Carries a non-Sendable value across isolation domains where only one side ever uses it (a delegate called on
/// its own queue, a handler touched on its own event loop).
///
/// Every use needs a `// Sendable:` comment at the place it is made, saying which side uses the value and why
/// the other never does.
package struct UncheckedSendableBox<Value>: @unchecked Sendable {
    // Sendable: by contract of the call site (see the type's documentation); the box adds no sharing of its own.
    /// The carried value.
    package let value: Value

    /// Wraps `value`.
    package init(_ value: Value) {
        self.value = value
    }
}
