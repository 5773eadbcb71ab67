/// A value that crosses into a closure run on the one thread that uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    // Sendable: the value is only used on one event loop's thread (the closures that touch it run there).
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
