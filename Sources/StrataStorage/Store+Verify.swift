import StrataFormat

extension Store {
    /// Checks the whole store: the log, every page reachable from every table's root (read from disk, not
    /// from the cache), every tree invariant and the row counts. Writers wait while it runs.
    ///
    /// - Returns: a report listing each problem with its file and offset; ``VerificationReport/isClean`` when none.
    /// - Throws: ``StorageError/storeClosed``; problems in the data are reported, not thrown.
    public func verify() throws -> VerificationReport {
        writerGate.wait()
        defer { writerGate.signal() }
        let (state, closed, rootRecordPage, nextPage) = shared.withLock {
            ($0.latest, $0.closed, $0.rootRecordPage, $0.nextPage)
        }
        if closed { throw StorageError.storeClosed }
        var verifier = StoreVerifier(pages: pages)
        let rootRecordPages = rootRecordPage == PageFormat.noPage ? 0 : nextPage - rootRecordPage
        verifier.verifyTables(state, rootRecordPages: rootRecordPages)
        var report = verifier.report
        verifyBlobs(of: state, into: &report)

        // The log: all of it must read back, in sequence, up to the end of the file.
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        do {
            let file = try fileSystem.openFile(at: walPath, mode: .existing)
            defer { try? file.close() }
            let summary = try WALReader(file: file).read { _, _, _ in }
            report.walRecords = summary.recordCount
            report.walBytes = summary.fileSize
            if let reason = summary.stopReason {
                report.problems.append(.init(file: walPath, offset: summary.validEnd, message: "log unreadable past this point: \(reason)"))
            }
            if summary.lastLSN != state.lsn {
                report.problems.append(
                    .init(file: walPath, offset: nil, message: "log ends at LSN \(summary.lastLSN), the store at \(state.lsn)"))
            }
        } catch {
            report.problems.append(.init(file: walPath, offset: nil, message: "\(error)"))
        }
        return report
    }
}
