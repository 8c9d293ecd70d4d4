import StrataFormat

extension Store {
    /// Checks the whole store: the log, every page reachable from every table's root (read from disk, not
    /// from the cache), every tree invariant and the row counts, every blob, and the segments' accounting.
    /// Writers wait while it runs.
    ///
    /// To check a store without opening it for writing (no recovery, nothing written), use
    /// ``ReadOnlyStore/verify(checkBlobContents:progress:)``.
    ///
    /// - Returns: a report listing each problem with its file and offset; ``VerificationReport/isClean`` when none.
    /// - Throws: ``StorageError/storeClosed``; problems in the data are reported, not thrown.
    public func verify() throws -> VerificationReport {
        writerGate.wait()
        defer { writerGate.signal() }
        // A table recovery left pending that cannot be built (a put the log holds that cannot be applied) is a problem
        // found, like any other: the rest is verified as it is.
        var unbuilt: StorageError?
        do { try buildPendingTables() } catch let error as StorageError { unbuilt = error }
        let (state, closed, rootRecordPage, nextPage, checkpointLSN, generation) = shared.withLock {
            ($0.latest, $0.closed, $0.rootRecordPage, $0.nextPage, $0.checkpointLSN, $0.generation)
        }
        if closed { throw StorageError.storeClosed }
        var verifier = StoreVerifier(pages: pages)
        let rootRecordPages = rootRecordPage == PageFormat.noPage ? 0 : nextPage - rootRecordPage
        verifier.verifyTables(state, rootRecordPages: rootRecordPages)
        var report = verifier.report
        if case .corruption(let file, let offset, let reason)? = unbuilt {
            report.problems.insert(
                .init(
                    file: file, offset: offset,
                    message: "the tables recovery replayed from the log cannot be built (their trees count no rows): "
                        + reason),
                at: 0)
        } else if let unbuilt {
            throw unbuilt
        }
        var blobVerifier = BlobVerifier(tree: tree, blobs: blobs)
        blobVerifier.verify(state, into: &report)
        ReadOnlyStore.describe(header, into: &report)
        report.checkpointGeneration = generation
        report.checkpointLSN = checkpointLSN
        report.pageFileBytes = (try? pages.file.size()) ?? 0

        // The log: all of it must read back, in sequence, up to the end of the file, ending at the state's LSN.
        let walPath = StoreFileNames.path(directory, StoreFileNames.wal)
        var noReplay: LogReplay?
        LogVerifier(path: walPath, fileSystem: fileSystem, storeID: header.storeID, coveredLSN: checkpointLSN)
            .verify(into: &report, replay: &noReplay)
        if let log = report.log, log.lastLSN != state.lsn {
            report.problems.append(
                .init(file: walPath, offset: nil, message: "log ends at LSN \(log.lastLSN), the store at \(state.lsn)"))
        }
        return report
    }
}
