import Foundation
import Strata

/// Turns the values Core Data's SQLite store keeps into Strata's attribute values, exactly:
///
/// | attribute type | SQLite storage class | value |
/// | --- | --- | --- |
/// | integer 16/32/64 | `INTEGER` | the integer (its type's range is checked) |
/// | boolean | `INTEGER` 0 or 1 | the flag |
/// | date | `REAL` (or `INTEGER`) | seconds since 2001-01-01 00:00 UTC, as `Date` keeps them |
/// | double | `REAL` (or `INTEGER`) | the number |
/// | float | `REAL` (or `INTEGER`) | the number as `Float` (Core Data widened the `Float` it stored) |
/// | decimal | `TEXT`, `INTEGER` or `REAL` | text and integers exactly; a `REAL` through its shortest decimal form |
/// | string | `TEXT` | the string |
/// | binary | `BLOB` | the bytes; with external storage allowed, see below |
/// | UUID | `BLOB` of 16 bytes | the UUID |
/// | URI | `TEXT` | the URL |
/// | transformable | `BLOB` | the stored bytes as they are (Strata keeps them as the transformer's output) |
///
/// An attribute that allows external storage keeps a marker byte first: `0x01` then the bytes, or `0x02` then the
/// ASCII UUID of a file in the store's `_EXTERNAL_DATA` folder holding them. `NULL` is no value.
enum CoreDataValueDecoder {
    /// Where a value comes from, for errors.
    struct Place {
        var table: String
        var column: String
        var row: Int64
    }

    static func value(
        _ value: SQLiteValue, of attribute: AttributeDescription, at place: Place, externalData: URL
    ) throws(ImportError) -> AttributeValue? {
        func wrong(_ expected: String) -> ImportError {
            .wrongType(
                table: place.table, column: place.column, row: place.row, expected: expected,
                found: value.storageClass)
        }
        func invalid(_ reason: String) -> ImportError {
            .invalidValue(table: place.table, column: place.column, row: place.row, reason: reason)
        }
        if case .null = value { return nil }
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            guard case .integer(let number) = value else { throw wrong("INTEGER") }
            guard attribute.type.integerRange?.contains(number) ?? true else {
                throw invalid("\(number) does not fit \(attribute.type)")
            }
            return .integer(number)
        case .boolean:
            guard case .integer(let number) = value else { throw wrong("INTEGER") }
            guard number == 0 || number == 1 else { throw invalid("\(number) is no Boolean (0 or 1)") }
            return .boolean(number == 1)
        case .date:
            let seconds: Double
            switch value {
            case .real(let number): seconds = number
            case .integer(let number): seconds = Double(number)
            default: throw wrong("REAL")
            }
            guard seconds.isFinite else { throw invalid("\(seconds) is no date") }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .double:
            switch value {
            case .real(let number): return .double(number)
            case .integer(let number): return .double(Double(number))
            default: throw wrong("REAL")
            }
        case .float:
            switch value {
            case .real(let number): return .float(Float(number))
            case .integer(let number): return .float(Float(number))
            default: throw wrong("REAL")
            }
        case .decimal:
            switch value {
            case .integer(let number): return .decimal(Decimal(number))
            case .real(let number):
                guard number.isFinite, let decimal = Decimal(string: "\(number)", locale: nil) else {
                    throw invalid("\(number) is no decimal number")
                }
                return .decimal(decimal)
            case .text(let text):
                guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
                    !decimal.isNaN
                else { throw invalid("'\(text)' is no decimal number") }
                return .decimal(decimal)
            default: throw wrong("DECIMAL (TEXT, INTEGER or REAL)")
            }
        case .string:
            guard case .text(let text) = value else { throw wrong("TEXT") }
            return .string(text)
        case .uuid:
            guard case .blob(let bytes) = value else { throw wrong("BLOB") }
            guard bytes.count == 16 else { throw invalid("a UUID is 16 bytes, not \(bytes.count)") }
            return .uuid(
                UUID(
                    uuid: (
                        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                        bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                    )))
        case .uri:
            guard case .text(let text) = value else { throw wrong("TEXT") }
            guard let url = URL(string: text) else { throw invalid("'\(text)' is no URL") }
            return .uri(url)
        case .binaryData, .transformable:
            guard case .blob(let bytes) = value else { throw wrong("BLOB") }
            let data =
                attribute.allowsExternalBinaryDataStorage
                ? try external(bytes, at: place, directory: externalData) : Data(bytes)
            // A transformable keeps Core Data's stored bytes (RowCoder writes `.data` as they are).
            return .data(data)
        case .undefined:
            throw invalid("an undefined attribute is never stored")
        }
    }

    /// The bytes of a value of an attribute that allows external storage: `0x01` + the bytes, or `0x02` + the
    /// ASCII UUID of the file that holds them.
    static func external(_ bytes: [UInt8], at place: Place, directory: URL) throws(ImportError) -> Data {
        guard let marker = bytes.first else {
            throw .invalidValue(
                table: place.table, column: place.column, row: place.row,
                reason: "an empty value where an external-storage marker byte (1 or 2) leads")
        }
        switch marker {
        case 0x01:
            return Data(bytes.dropFirst())
        case 0x02:
            let name = String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            guard UUID(uuidString: name) != nil else {
                throw .invalidValue(
                    table: place.table, column: place.column, row: place.row,
                    reason: "the external reference '\(name)' is no UUID")
            }
            let file = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw .missingExternalData(table: place.table, column: place.column, row: place.row, path: file.path)
            }
            return data
        default:
            throw .invalidValue(
                table: place.table, column: place.column, row: place.row,
                reason: "marker byte \(marker): Core Data writes 1 (inline) or 2 (external file)")
        }
    }
}
