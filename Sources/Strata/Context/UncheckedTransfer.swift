/// Carries a value the compiler cannot prove safe to send across a queue hop that the context's own queue
/// discipline makes safe: ``ManagedObjectContext/perform(_:)`` hands a context and its work to the context's
/// queue, where alone the context is used (debug builds check it, ``ManagedObjectContext/checkConfinement()``).
struct UncheckedTransfer<Value>: @unchecked Sendable {
    // Safety: used only to move a context's work to, and its result from, the context's own queue while the
    // sender waits or no longer touches the value (Core Data's perform contract).
    var value: Value
}
