import Foundation

/// A place in a store's persistent history (Core Data's `NSPersistentHistoryToken`): the number of a
/// transaction in one store. Tokens of one store are ordered; they survive closing and reopening the store, so
/// keep the last one you processed (it is `Codable`) and fetch the history after it on the next launch.
public struct PersistentHistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The store whose history it is.
    public let storeIdentifier: UUID
    /// The transaction's number: increasing, never reused, starting at 1.
    public let transactionNumber: UInt64

    /// A token of a store's transaction.
    public init(storeIdentifier: UUID, transactionNumber: UInt64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by transaction number (tokens of different stores by store, then number).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.storeIdentifier.uuidString, lhs.transactionNumber) < (
            rhs.storeIdentifier.uuidString, rhs.transactionNumber
        )
    }

    public var description: String { "\(storeIdentifier.uuidString)#\(transactionNumber)" }
}
