import Foundation
import StrataFormat

/// The bytes of a history record, a row of the Strata store's `store.history` table (FORMAT.md §6.8).
extension HistoryRecord {
    /// The record format's version byte.
    static let formatVersion: UInt8 = 1
    /// An absent optional string's length.
    static let absentString: UInt16 = 0xFFFF

    /// Encodes the record. Strings longer than 65,534 UTF-8 bytes are cut at a character boundary (author and
    /// context names, key names: none is that long in practice).
    package func encoded() throws -> [UInt8] {
        var writer = ByteWriter()
        writer.writeUInt8(Self.formatVersion)
        writer.writeUInt64LE(UInt64(bitPattern: Int64((timestamp.timeIntervalSince1970 * 1_000_000).rounded())))
        Self.write(author, to: &writer)
        Self.write(contextName, to: &writer)
        writer.writeUInt32LE(UInt32(changes.count))
        for change in changes {
            writer.writeUInt8(UInt8(change.type.rawValue))
            writer.writeUInt16LE(change.entity.entityID)
            writer.writeUInt64LE(change.rowID)
            writer.writeUInt16LE(UInt16(change.keys.count))
            for key in change.keys { Self.write(key, to: &writer) }
            let preserved = change.tombstone.sorted { $0.key < $1.key }.compactMap { name, value in
                change.entity.attributesByName[name].map { ($0, value) }
            }
            writer.writeUInt16LE(UInt16(preserved.count))
            guard !preserved.isEmpty else { continue }
            for (attribute, _) in preserved { Self.write(attribute.name, to: &writer) }
            let fields = try preserved.map { attribute, value in try RowCoder.field(for: value, of: attribute) }
            let record = RowRecord.encode(entityID: change.entity.entityID, rowVersion: 0, fields: fields)
            writer.writeUInt32LE(UInt32(record.count))
            writer.writeBytes(record)
        }
        return writer.take()
    }

    private static func write(_ string: String?, to writer: inout ByteWriter) {
        guard let string else {
            writer.writeUInt16LE(absentString)
            return
        }
        var utf8 = Array(string.utf8)
        if utf8.count >= Int(absentString) {
            utf8 = Array(String(decoding: utf8.prefix(Int(absentString) - 4), as: UTF8.self).utf8)
            while utf8.count >= Int(absentString) { utf8.removeLast() }
        }
        writer.writeUInt16LE(UInt16(utf8.count))
        writer.writeBytes(utf8)
    }

    /// Decodes a record, validating every count and length against the bytes.
    ///
    /// - Parameter entities: the model's entities by ID.
    /// - Throws: `FormatError` when the bytes are truncated or malformed or name an entity the model lacks.
    package static func decode(_ bytes: [UInt8], entities: [UInt16: EntityDescription]) throws -> HistoryRecord {
        try bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            let version = try reader.readUInt8()
            guard version == formatVersion else { throw FormatError.invalidField("history record version \(version)") }
            let micros = Int64(bitPattern: try reader.readUInt64LE())
            let timestamp = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
            let author = try readString(&reader)
            let contextName = try readString(&reader)
            let count = Int(try reader.readUInt32LE())
            // Every change takes at least 15 bytes: a count beyond that is damage, not an allocation to make.
            guard count <= reader.remaining / 15 else {
                throw FormatError.invalidField("history change count \(count)")
            }
            var changes: [Change] = []
            changes.reserveCapacity(count)
            for _ in 0..<count {
                let rawType = try reader.readUInt8()
                guard let type = PersistentHistoryChange.ChangeType(rawValue: Int(rawType)) else {
                    throw FormatError.invalidField("history change type \(rawType)")
                }
                let entityID = try reader.readUInt16LE()
                guard let entity = entities[entityID] else {
                    throw FormatError.invalidField("history change of unknown entity \(entityID)")
                }
                var change = Change(type: type, entity: entity, rowID: try reader.readUInt64LE())
                for _ in 0..<Int(try reader.readUInt16LE()) {
                    guard let key = try readString(&reader) else { throw FormatError.invalidField("absent key") }
                    change.keys.append(key)
                }
                let preserved = Int(try reader.readUInt16LE())
                if preserved > 0 {
                    var names: [String] = []
                    for _ in 0..<preserved {
                        guard let name = try readString(&reader) else { throw FormatError.invalidField("absent name") }
                        names.append(name)
                    }
                    let length = Int(try reader.readUInt32LE())
                    let (_, fields) = try RowRecord.decodeAll(try reader.readBytes(length))
                    guard fields.count == names.count else {
                        throw FormatError.invalidField("tombstone of \(names.count) names holds \(fields.count) fields")
                    }
                    for (name, field) in zip(names, fields) {
                        // An attribute the model no longer has leaves its value out.
                        guard let attribute = entity.attributesByName[name] else { continue }
                        do {
                            if let value = try RowCoder.value(from: field, of: attribute) {
                                change.tombstone[name] = value
                            }
                        } catch {
                            throw FormatError.invalidField("tombstone value of \(name): \(error)")
                        }
                    }
                }
                changes.append(change)
            }
            guard reader.remaining == 0 else {
                throw FormatError.invalidField("\(reader.remaining) bytes after history")
            }
            return HistoryRecord(timestamp: timestamp, author: author, contextName: contextName, changes: changes)
        }
    }

    private static func readString(_ reader: inout ByteReader) throws -> String? {
        let length = try reader.readUInt16LE()
        guard length != absentString else { return nil }
        return try reader.readUTF8(Int(length))
    }
}
