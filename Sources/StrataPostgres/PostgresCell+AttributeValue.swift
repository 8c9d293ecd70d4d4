#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataFormat

extension PostgresCell {
    /// The attribute value a cell holds (nil for SQL NULL), as the column of `attribute` keeps it.
    ///
    /// - Throws: ``PostgresStoreError/corruptRow(table:rowID:reason:)`` when the cell does not decode.
    func attributeValue(of attribute: AttributeDescription, table: String, rowID: UInt64) throws -> AttributeValue? {
        guard bytes != nil else { return nil }
        do {
            switch attribute.type {
            case .integer16, .integer32, .integer64:
                let number = try decode(Int64.self)
                guard attribute.type.integerRange?.contains(number) ?? true else {
                    throw PostgresStoreError.corruptRow(
                        table: table, rowID: rowID, reason: "\(attribute.name): \(number) is out of range")
                }
                return .integer(number)
            case .decimal:
                let text = try decode(String.self)
                guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                    throw PostgresStoreError.corruptRow(
                        table: table, rowID: rowID, reason: "\(attribute.name): '\(text)' is not a decimal")
                }
                return .decimal(number)
            case .double: return .double(try decode(Double.self))
            case .float: return .float(try decode(Float.self))
            case .string: return .string(try decode(String.self))
            case .boolean: return .boolean(try decode(Bool.self))
            case .date: return .date(Date(timeIntervalSinceReferenceDate: try decode(Double.self)))
            case .binaryData: return .data(Data(buffer: try decode(ByteBuffer.self)))
            case .uuid: return .uuid(try decode(UUID.self))
            case .uri:
                let text = try decode(String.self)
                guard let url = URL(string: text) else {
                    throw PostgresStoreError.corruptRow(
                        table: table, rowID: rowID, reason: "\(attribute.name): '\(text)' is not a URL")
                }
                return .uri(url)
            case .transformable, .undefined:
                let buffer = try decode(ByteBuffer.self)
                do {
                    return try RowCoder.value(from: .bytes(Array(buffer: buffer)), of: attribute)
                } catch {
                    throw ObjectGraphError.transformationFailed(key: attribute.name, reason: "\(error)")
                }
            }
        } catch let error as PostgresDecodingError {
            throw PostgresStoreError.corruptRow(table: table, rowID: rowID, reason: "\(attribute.name): \(error)")
        }
    }
}
#endif
