/// A check of `strata demo` that did not hold, or a store directory the demo refuses to remove.
struct DemoFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
