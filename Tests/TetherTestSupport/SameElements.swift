/// Whether two collections hold the same elements, for `#expect(sameElements(a, b))`.
///
/// Use it instead of `#expect(a == b)` when the collections are large: when an `==` of two collections fails,
/// swift-testing computes their difference, and that is quadratic. A failing comparison of 3 MB kept a test process
/// busy for over ten minutes, long after its tests had ended.
public func sameElements<C: Collection & Equatable>(_ a: C, _ b: C) -> Bool {
    a == b
}
