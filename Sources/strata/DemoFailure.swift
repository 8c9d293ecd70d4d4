/// A check of `strata demo` that did not hold (exit code 1), or a store directory the demo refuses to remove
/// (a `refusal`: exit code 64, a usage error).
struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    /// Whether the demo refused its directory (before changing anything) rather than failed a check.
    var refusal: Bool

    init(_ description: String, refusal: Bool = false) {
        self.description = description
        self.refusal = refusal
    }
}
