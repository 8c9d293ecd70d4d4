import Foundation
import Strata
import StrataFormat

/// The fixed model FuzzRowRecord decodes rows with: one entity with an attribute of every storable type,
/// its row fields in this order.
public enum RowFuzzModel {
    /// Attribute names and types, in row order.
    public static let attributes: [(String, AttributeType)] = [
        ("i16", .integer16), ("i32", .integer32), ("i64", .integer64), ("dec", .decimal), ("dbl", .double),
        ("flt", .float), ("str", .string), ("bool", .boolean), ("date", .date), ("data", .binaryData),
        ("uuid", .uuid), ("uri", .uri), ("tags", .transformable),
    ]

    /// The name the transformable attribute's transformer is registered under (in ``transformers`` only).
    public static let transformerName = "FuzzTags"

    /// A registry of its own holding the JSON transformer of `[String]`.
    public static let transformers: ValueTransformerRegistry = {
        let registry = ValueTransformerRegistry()
        registry.register(CodableValueTransformer<[String]>(), named: transformerName)
        return registry
    }()

    /// The model.
    public static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(entities: [
                Entity("Row") {
                    for (name, type) in attributes {
                        type == .transformable
                            ? Attribute(name, type, valueTransformerName: transformerName) : Attribute(name, type)
                    }
                }
            ])
        } catch { fatalError("the fuzz model does not build: \(error)") }
    }()

    /// The entity.
    public static let entity = model.entity(named: "Row")!

    /// The coder.
    public static let coder = RowCoder(entity: entity, transformers: transformers)
}

/// FuzzRowRecord: a row record through `RowRecord` and through Strata's `RowCoder`.
///
/// Input: `index:u8` then a row record. `RowRecord.Header.decode`, `RowRecord.decodeAll`,
/// `RowRecord.blobReferences`, `RowRecord.field(at:)` and `RowRecord.checkField(at:)` for every field, `field(at:)`
/// for the index from the input (in or out of range); then `RowCoder.decode`, `values(from:)` and `value(of:in:)` for every attribute of ``RowFuzzModel``.
///
/// Checks: nothing traps; a decoded row re-encodes to exactly its bytes; `field(at:)` and `blobReferences` agree
/// with `decodeAll`; `checkField` accepts what `field(at:)` decodes; `IndexKey.keyLengthBound` agrees with `appendKey`;
/// the coder's whole-row and one-value paths agree; values convert back to the same fields (exactly for every
/// type whose conversion the docs call exact; decimals to an equal value).
public func fuzzRowRecord(_ data: UnsafeRawBufferPointer) {
    guard let index = data.first else { return }
    let row = Array(data.dropFirst())
    _ = try? RowRecord.field(at: Int(index), in: row)
    _ = try? RowRecord.field(at: Int(index) - 128, in: row)
    let header = try? RowRecord.Header.decode(row)
    let blobs = try? RowRecord.blobReferences(row)
    if let header { checkFieldChecks(row, header: header) }
    guard let decoded = try? RowRecord.decodeAll(row) else {
        checkCoder(row, fields: nil)
        return
    }
    fuzzCheck(decoded.header == header, "Header.decode and decodeAll disagree")
    var decodedBlobs: [Int: UInt64] = [:]
    for (position, field) in decoded.fields.enumerated() {
        if case .blobReference(let blob) = field { decodedBlobs[position] = blob }
    }
    fuzzCheck(blobs?.header == decoded.header, "blobReferences reads another header than decodeAll")
    fuzzCheck(blobs?.blobs == decodedBlobs, "blobReferences disagrees with decodeAll")
    fuzzCheck(decoded.fields.count == decoded.header.fieldCount, "field count")
    let encoded = RowRecord.encode(
        entityID: decoded.header.entityID, rowVersion: decoded.header.rowVersion, fields: decoded.fields)
    fuzzCheck(encoded == row, "row does not encode back to its bytes")
    for (position, field) in decoded.fields.enumerated() {
        fuzzCheck(
            (try? RowRecord.field(at: position, in: row)) == field, "field(at: \(position)) disagrees with decodeAll")
        fuzzCheck(field.encodedSize >= 1, "field size")
    }
    checkCoder(row, fields: decoded.fields)
}

/// `RowRecord.checkField` accepts exactly the fields `field(at:)` decodes, with the same tag (and the same field for
/// the kinds it decodes); `IndexKey.keyLengthBound` fails exactly when `IndexKey.appendKey` does for a field, and
/// bounds the key it makes.
func checkFieldChecks(_ row: [UInt8], header: RowRecord.Header) {
    row.withUnsafeBytes { bytes in
        for position in 0..<min(header.fieldCount, 64) {
            var key: [UInt8] = []
            let made = (try? IndexKey.appendKey(fields: [position], of: bytes, header: header, to: &key)) != nil
            let bound = try? IndexKey.keyLengthBound(fields: [position], of: bytes, header: header)
            fuzzCheck(made == (bound != nil), "keyLengthBound(\(position)) disagrees with appendKey")
            fuzzCheck(bound.map { $0 >= key.count } ?? true, "keyLengthBound(\(position)) is below the key's length")
            let decoded = try? RowRecord.field(at: position, in: bytes)
            let checked = try? RowRecord.checkField(at: position, in: bytes, header: header)
            fuzzCheck((decoded == nil) == (checked == nil), "checkField(at: \(position)) disagrees with field(at:)")
            guard let decoded, let checked else { continue }
            fuzzCheck(checked.tag == decoded.tag, "checkField(at: \(position)) reads another tag")
            if let field = checked.field {
                fuzzCheck(field == decoded, "checkField(at: \(position)) decodes another field")
            }
        }
    }
}

func checkCoder(_ row: [UInt8], fields: [RowRecord.Field]?) {
    let coder = RowFuzzModel.coder
    let whole = try? coder.decode(row)
    for attribute in RowFuzzModel.entity.persistentAttributes {
        let one: Result<AttributeValue?, RowCodingError> = Result { () throws(RowCodingError) in
            try coder.value(of: attribute, in: row)
        }
        if let whole, let position = attribute.storageIndex {
            guard case .success(let value) = one else {
                fuzzFail("value(of: \(attribute.name)) fails on a row decode() accepts: \(one)")
            }
            fuzzCheck(same(value, whole.values[position]), "value(of: \(attribute.name)) disagrees with decode()")
        }
    }
    guard let fields, let values = try? coder.values(from: fields) else { return }
    if let whole {
        fuzzCheck(zip(values, whole.values).allSatisfy { same($0, $1) }, "values(from:) disagrees with decode()")
    }
    for value in values { _ = value?.description }
    guard let back = try? coder.fields(for: values) else {
        fuzzFail("values decoded from a row do not convert back to fields: \(values)")
    }
    for (attribute, (original, again)) in zip(RowFuzzModel.entity.persistentAttributes, zip(fields, back)) {
        switch (original, again) {
        case (.decimal(let a), .decimal(let b)):
            guard let first = decimal(a, attribute), let second = decimal(b, attribute) else {
                fuzzFail("decimal \(a) or \(b) does not convert")
            }
            fuzzCheck(first.isNaN ? second.isNaN : first == second, "decimal \(a) comes back as \(b)")
        case (.uri, .uri):
            break  // URL parsing may normalize the text
        case (.bytes, .bytes) where attribute.type == .transformable:
            break  // JSON re-encoding may normalize the text
        default:
            fuzzCheck(original == again, "\(attribute.name): \(original) comes back as \(again)")
        }
    }
}

/// The `Decimal` a row's decimal bits stand for, through the coder (the conversion itself is internal).
func decimal(_ bits: RowRecord.DecimalBits, _ attribute: AttributeDescription) -> Decimal? {
    guard case .decimal(let value)? = try? RowCoder.value(from: .decimal(bits), of: attribute) else { return nil }
    return value
}

/// Whether two optional values are the same, NaNs included (AttributeValue's == follows IEEE 754).
func same(_ a: AttributeValue?, _ b: AttributeValue?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (.double(let x)?, .double(let y)?): return x.bitPattern == y.bitPattern
    case (.float(let x)?, .float(let y)?): return x.bitPattern == y.bitPattern
    case (.date(let x)?, .date(let y)?):
        return x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
    case (.decimal(let x)?, .decimal(let y)?): return x.isNaN ? y.isNaN : x == y
    default: return a == b
    }
}
