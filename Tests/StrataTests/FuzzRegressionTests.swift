import Foundation
import Strata
import StrataFormat
import Testing

/// Inputs the fuzz targets of Fuzz/ found in the object graph's row coding (issue 10; Fuzz/README.md). Each
/// case runs in a child process (an exit test), so that a trap fails the one test instead of ending the run.
@Suite struct FuzzRegressionObjectGraphTests {
    /// Fuzz/FailCases/FuzzRowRecord/date-nan-description: a row whose date field holds the bits of a NaN
    /// (`07 ff ff ff ff ff ff ff ff`). `RowCoder` decodes it into `.date(Date(timeIntervalSinceReferenceDate:
    /// .nan))`, and the value's `description` (`AttributeValue.description` → `Date.description` of
    /// FoundationEssentials) traps. Infinite and huge dates print `<description unavailable>`; only NaN traps.
    /// Fixed: `RowCoder` rejects a NaN date with a `RowCodingError`.
    @Test func rowWithNaNDateDecodesToAPrintableValueOrFails() async {
        await #expect(processExitsWith: .success) {
            let model = try ManagedObjectModel(entities: [Entity("Row") { Attribute("date", .date) }])
            let entity = try #require(model.entity(named: "Row"))
            var row = RowRecord.encode(
                entityID: entity.entityID, rowVersion: 1, fields: [.date(secondsSinceReferenceDate: 0)])
            row.replaceSubrange((row.count - 8)..., with: [UInt8](repeating: 0xFF, count: 8))
            if let decoded = try? RowCoder(entity: entity).decode(row), let value = decoded.values[0] {
                _ = value.description
            }
        }
    }

    @Test func rowWithNaNDateIsARowCodingError() throws {
        let model = try ManagedObjectModel(entities: [Entity("Row") { Attribute("date", .date) }])
        let entity = try #require(model.entity(named: "Row"))
        var row = RowRecord.encode(
            entityID: entity.entityID, rowVersion: 1, fields: [.date(secondsSinceReferenceDate: 0)])
        row.replaceSubrange((row.count - 8)..., with: [UInt8](repeating: 0xFF, count: 8))
        #expect(throws: RowCodingError.self) { try RowCoder(entity: entity).decode(row) }
    }
}
