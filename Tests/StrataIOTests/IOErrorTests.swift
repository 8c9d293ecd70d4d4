import SystemPackage
import Testing

@testable import StrataIO

/// The Errno to IOError.Code mapping, in its one place.
@Suite struct IOErrorTests {
    @Test(arguments: [
        (Errno.noSuchFileOrDirectory, IOError.Code.noSuchFile),
        (.fileExists, .fileExists),
        (.permissionDenied, .permissionDenied),
        (.notPermitted, .permissionDenied),
        (.noSpace, .noSpace),
        (.diskQuotaExceeded, .noSpace),
        (.ioError, .ioFailure),
        (.wouldBlock, .wouldBlock),
        (.resourceTemporarilyUnavailable, .wouldBlock),
        (.notDirectory, .notADirectory),
        (.isDirectory, .isADirectory),
        (.readOnlyFileSystem, .readOnlyFileSystem),
        (.tooManyOpenFiles, .tooManyOpenFiles),
        (.tooManyOpenFilesInSystem, .tooManyOpenFiles),
    ])
    func errnoMapsToItsPortableCode(errno: Errno, code: IOError.Code) {
        #expect(IOError.Code(errno) == code)
    }

    @Test func unlistedErrnoKeepsItsNumberAndShowsTheSystemsMessage() {
        #expect(IOError.Code(.directoryNotEmpty) == .other(Errno.directoryNotEmpty.rawValue))
        // strerror's text (issue 23: `system error 29` told an operator nothing), and the number for logs.
        #expect(
            IOError.Code(.directoryNotEmpty).description
                == "directory not empty (errno \(Errno.directoryNotEmpty.rawValue))")
        #expect(IOError.Code(.fileTooLarge).description == "file too large (errno \(Errno.fileTooLarge.rawValue))")
    }

    @Test func errorFromErrnoKeepsOperationAndPath() {
        let error = IOError(errno: .noSpace, operation: "pwrite", path: "/db/wal")
        #expect(error == IOError(.noSpace, operation: "pwrite", path: "/db/wal"))
        #expect(error.description == "pwrite /db/wal: no space left on device")
    }
}
