import Foundation
import Testing

@testable import Strata

/// The bytes of a persistent history record (FORMAT.md §6.8): round trips, and damaged bytes refused with an
/// error, never a crash or a large allocation.
@Suite struct HistoryRecordCodingTests {
    static let entities = Dictionary(
        uniqueKeysWithValues: PersistentHistoryTests.model.entities.map { ($0.entityID, $0) })

    static func record() -> HistoryRecord {
        let item = PersistentHistoryTests.model.entity(named: "HistItem")!
        return HistoryRecord(
            timestamp: Date(timeIntervalSince1970: 1_700_000_000.25), author: "importer", contextName: nil,
            changes: [
                .init(type: .insert, entity: item, rowID: 7),
                .init(type: .update, entity: item, rowID: 8, keys: ["count", "folder"]),
                .init(type: .delete, entity: item, rowID: 9, tombstone: ["name": .string("Ada")]),
            ])
    }

    @Test func aRecordRoundTrips() throws {
        let bytes = try Self.record().encoded()
        #expect(bytes.first == HistoryRecord.formatVersion)
        let decoded = try HistoryRecord.decode(bytes, entities: Self.entities)
        #expect(decoded.timestamp == Self.record().timestamp)
        #expect(decoded.author == "importer")
        #expect(decoded.contextName == nil)
        #expect(decoded.changes.map(\.type) == [.insert, .update, .delete])
        #expect(decoded.changes.map(\.rowID) == [7, 8, 9])
        #expect(decoded.changes[1].keys == ["count", "folder"])
        #expect(decoded.changes[2].tombstone == ["name": .string("Ada")])
    }

    @Test func everyTruncationAndAnOverlongCountAreRefused() throws {
        let bytes = try Self.record().encoded()
        for length in 0..<bytes.count {
            #expect(throws: (any Error).self) {
                try HistoryRecord.decode(Array(bytes.prefix(length)), entities: Self.entities)
            }
        }
        var huge = bytes
        // The change count follows the version, the timestamp and the two strings ("importer" and an absent one).
        let countOffset = 1 + 8 + 2 + 8 + 2
        huge.replaceSubrange(countOffset..<countOffset + 4, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: (any Error).self) { try HistoryRecord.decode(huge, entities: Self.entities) }
        var version = bytes
        version[0] = 2
        #expect(throws: (any Error).self) { try HistoryRecord.decode(version, entities: Self.entities) }
        #expect(throws: (any Error).self) { try HistoryRecord.decode(bytes + [0], entities: Self.entities) }
        #expect(throws: (any Error).self) { try HistoryRecord.decode(bytes, entities: [:]) }
    }
}
