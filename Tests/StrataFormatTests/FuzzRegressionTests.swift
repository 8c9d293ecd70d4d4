import StrataFormat
import Testing

/// Decoder inputs behind the findings of Fuzz/ (issue 10; Fuzz/README.md). The whole-store inputs that
/// found them are replayed in Tests/StrataStorageTests/FuzzRegressionTests.swift.
@Suite struct FuzzRegressionFormatTests {
    /// FuzzStoreOpen (Fuzz/FailCases/FuzzStoreOpen/root-record-wal-lsn-max): a root record claiming it covers
    /// the log up to LSN `UInt64.max`, with valid checksums, made `LogVerifier` (and `Store.open`) compute
    /// `coveredLSN + 1` and trap on the overflow. No record can follow such an LSN, so the decoder rejects it.
    /// LSNs are bounded by `WALFormat.maximumLSN` (2^62) everywhere, so that no writer can overflow one.
    @Test func rootRecordWithWALLSNMaxIsRejected() {
        for lsn: UInt64 in [.max, .max - 1, WALFormat.maximumLSN] {
            let record = RootRecord(walLSN: lsn, nextTableID: 1, previousRootPage: PageFormat.noPage, tables: [])
            let payload = record.encodedPayload()
            #expect(throws: FormatError.self) {
                try payload.withUnsafeBytes { try RootRecord.decode($0, firstPage: 1) }
            }
        }
        let highest = RootRecord(
            walLSN: WALFormat.maximumLSN - 1, nextTableID: 1, previousRootPage: PageFormat.noPage, tables: [])
        let decoded = try? highest.encodedPayload().withUnsafeBytes { try RootRecord.decode($0, firstPage: 1) }
        #expect(decoded == highest)
    }
}
