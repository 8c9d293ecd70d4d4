#if Postgres
import Foundation
import PostgresNIO
import Strata
import StrataFormat

/// Statement parameters as they are added: each value is bound and its placeholder (`$n::type`) returned.
struct PostgresStatement {
    var binds = PostgresBindings()

    /// The next placeholder, cast to `type`.
    private func placeholder(_ type: String) -> String { "$\(binds.count)::\(type)" }

    mutating func bind(_ value: Int64) -> String {
        binds.append(value)
        return placeholder("bigint")
    }

    mutating func bind(_ value: String) -> String {
        binds.append(value)
        return placeholder("text")
    }

    mutating func bind(_ value: Double) -> String {
        binds.append(value)
        return placeholder("double precision")
    }

    /// A decimal number's text (`"2.5"`, `"1e-07"`) as `numeric`.
    mutating func bindNumeric(_ text: String) -> String {
        binds.append(text)
        return placeholder("numeric")
    }

    mutating func bind(_ values: [Int64]) -> String {
        binds.append(values)
        return placeholder("bigint[]")
    }

    mutating func bind(_ values: [Int16]) -> String {
        binds.append(values)
        return placeholder("smallint[]")
    }

    mutating func bindBytes(_ bytes: [UInt8]) -> String {
        binds.append(ByteBuffer(bytes: bytes))
        return placeholder("bytea")
    }

    mutating func bindNull(_ type: String) -> String {
        binds.appendNull()
        return placeholder(type)
    }

    /// Binds an attribute's value as its column holds it.
    ///
    /// - Throws: ``PostgresStoreError/unsupportedValue(entity:attribute:reason:)`` for a value PostgreSQL cannot
    ///   hold (a string with a NUL character) or one of the wrong type; a transformer's failure.
    mutating func bind(_ value: AttributeValue?, of attribute: AttributeDescription) throws -> String {
        let type = Self.castType(attribute)
        guard let value else { return bindNull(type) }
        func unsupported(_ reason: String) -> PostgresStoreError {
            .unsupportedValue(entity: attribute.entity.name, attribute: attribute.name, reason: reason)
        }
        switch (attribute.type, value) {
        case (.integer16, .integer(let number)), (.integer32, .integer(let number)), (.integer64, .integer(let number)):
            binds.append(number)
        case (.decimal, .decimal(let number)):
            guard !number.isNaN else { throw unsupported("NaN is not a number PostgreSQL's numeric keeps exactly") }
            binds.append(number.description)
        case (.double, .double(let number)): binds.append(number)
        case (.float, .float(let number)): binds.append(number)
        case (.string, .string(let string)):
            guard !string.utf8.contains(0) else { throw unsupported("PostgreSQL text cannot hold a NUL character") }
            binds.append(string)
        case (.boolean, .boolean(let flag)): binds.append(flag)
        case (.date, .date(let date)): binds.append(date.timeIntervalSinceReferenceDate)
        case (.binaryData, .data(let data)): binds.append(ByteBuffer(bytes: data))
        case (.uuid, .uuid(let uuid)): binds.append(uuid)
        case (.uri, .uri(let url)):
            let string = url.absoluteString
            guard !string.utf8.contains(0) else { throw unsupported("PostgreSQL text cannot hold a NUL character") }
            binds.append(string)
        case (.transformable, _):
            do {
                guard case .bytes(let bytes) = try RowCoder.field(for: value, of: attribute) else {
                    throw unsupported("the transformer gave no bytes")
                }
                binds.append(ByteBuffer(bytes: bytes))
            } catch let error as RowCodingError {
                throw ObjectGraphError.transformationFailed(key: attribute.name, reason: "\(error)")
            }
        default:
            throw unsupported("\(value) is not a value of type \(attribute.type)")
        }
        return placeholder(type)
    }

    /// The type a placeholder of an attribute's column is cast to.
    static func castType(_ attribute: AttributeDescription) -> String {
        switch attribute.type {
        case .integer16: "smallint"
        case .integer32: "integer"
        case .integer64: "bigint"
        case .decimal: "numeric"
        case .double, .date: "double precision"
        case .float: "real"
        case .string, .uri: "text"
        case .boolean: "boolean"
        case .binaryData, .transformable, .undefined: "bytea"
        case .uuid: "uuid"
        }
    }
}
#endif
