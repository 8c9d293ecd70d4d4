import StrataFormat
import Testing

@testable import StrataStorage

/// A transaction's log records until it turns large (``StoreConfiguration/largeTransactionBytes``): a put that would
/// take them to the limit turns it large without being encoded, exactly where encoding it would have.
@Suite struct TransactionLogTests {
    /// Puts of sizes from 0 to about 6 KB: 2.4 MB in all, so the records are cut at the 1 MiB target twice.
    static let values: [[UInt8]] = (0..<800).map {
        [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: ($0 * 37) % 6_000)
    }

    /// The count of the records after each of ``values``, as a builder that encodes every put has it.
    static let counts: [Int] = {
        var builder = WALRecordBuilder(salt: 7, firstLSN: 1)
        return values.enumerated().map { row, value in
            value.withUnsafeBytes { bytes in
                builder.appendOperation {
                    WALOperation.encodePut(tableID: 1, rowID: UInt64(row), value: bytes, into: &$0)
                }
            }
            return builder.writer.count
        }
    }()

    /// The log after ``values`` (as puts, or as operations it encodes), and the put that turned it large (nil: none).
    private func log(largeBytes: UInt64, asPuts: Bool) -> (log: TransactionLog, largeAt: Int?) {
        var log = TransactionLog(salt: 7, firstLSN: 1, largeBytes: largeBytes)
        var largeAt: Int?
        for (row, value) in Self.values.enumerated() {
            if asPuts {
                log.appendPut(tableID: 1, rowID: UInt64(row), value: value)
            } else {
                value.withUnsafeBytes { bytes in
                    log.appendOperation {
                        WALOperation.encodePut(tableID: 1, rowID: UInt64(row), value: bytes, into: &$0)
                    }
                }
            }
            if log.isLarge, largeAt == nil { largeAt = row }
        }
        return (log, largeAt)
    }

    @Test func aPutTurnsTheTransactionLargeAtTheCountEncodingItWouldReach() {
        // Limits at, just under and just over the count after puts on both sides of a record's cut, and the first.
        let cut = Self.counts.firstIndex { $0 > WALFormat.targetPayloadSize }!
        var limits: [UInt64] = [1, 2, UInt64(WALFormat.recordHeaderSize) + 17, UInt64(Self.counts.last! + 1)]
        for row in [0, 1, 2, 100, cut - 1, cut, cut + 1, Self.values.count - 1] {
            let count = UInt64(Self.counts[row])
            limits += [count - 1, count, count + 1]
        }
        for largeBytes in limits {
            let (puts, putsLargeAt) = log(largeBytes: largeBytes, asPuts: true)
            let (encoded, encodedLargeAt) = log(largeBytes: largeBytes, asPuts: false)
            #expect(putsLargeAt == encodedLargeAt, "limit \(largeBytes)")
            #expect(putsLargeAt == Self.counts.firstIndex { UInt64($0) >= largeBytes }, "limit \(largeBytes)")
            #expect(puts.isLarge == encoded.isLarge)
            #expect(puts.hasChanges && encoded.hasChanges)
            if !puts.isLarge {
                var puts = puts
                var encoded = encoded
                #expect(puts.finish().bytes == encoded.finish().bytes, "limit \(largeBytes)")
            }
        }
    }

    @Test func aPutAfterTheTransactionTurnedLargeIsNotEncoded() {
        var log = TransactionLog(salt: 7, firstLSN: 1, largeBytes: 100)
        log.appendPut(tableID: 1, rowID: 1, value: [UInt8](repeating: 1, count: 200))
        #expect(log.isLarge)
        var encoded = false
        log.appendOperation { _ in encoded = true }
        log.appendPut(tableID: 1, rowID: 2, value: [1])
        #expect(log.isLarge && log.hasChanges && !encoded)
    }
}
