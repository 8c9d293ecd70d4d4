#if Postgres
import Foundation
import StrataTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The throwaway clusters of the tests: a cluster whose test process died is stopped and removed by the next one.
@Suite struct PostgresTestClusterTests {
    /// A PID that named a process which has exited (a child waited for).
    static func deadProcessID() throws -> pid_t {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        return child.processIdentifier
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    @Test func aClusterWhoseOwnerDiedIsStoppedAndRemovedByTheNextStart() throws {
        let orphan = try PostgresTestCluster()
        defer { orphan.destroy() }
        let base = (orphan.directory as NSString).deletingLastPathComponent
        #expect(Self.accepts(port: orphan.port))
        // A running owner (this process): left alone.
        #expect(!PostgresTestCluster.stopOrphans(in: base).contains(orphan.directory))
        #expect(Self.accepts(port: orphan.port))
        // As if the test process that made it had crashed: its owner file names a process that is gone.
        try "\(try Self.deadProcessID()) 0".write(
            toFile: "\(orphan.directory)/owner", atomically: true, encoding: .utf8)
        let next = try PostgresTestCluster()
        defer { next.destroy() }
        #expect(!FileManager.default.fileExists(atPath: orphan.directory))
        #expect(!Self.accepts(port: orphan.port))
        #expect(Self.accepts(port: next.port))
        #expect(FileManager.default.fileExists(atPath: "\(next.directory)/owner"))
    }
}
#endif
