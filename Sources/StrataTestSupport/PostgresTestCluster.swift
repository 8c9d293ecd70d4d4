import Foundation
import StrataLock

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: `initdb` in a temporary directory, `pg_ctl start` on a free local
/// port (its unix socket in the same directory), no system service, no password (`trust` on loopback), and
/// `pg_ctl stop` plus removal of the directory at the end.
///
/// A test process that crashes (or is killed) never gets to its end: its server would run on. So each cluster's
/// directory records its owner (`owner`: the test process's PID and start time, from `/proc/<pid>/stat`), and
/// every new cluster first stops and removes the clusters whose owner is gone (``stopOrphans(in:)``), before
/// making its own.
///
/// PostgreSQL refuses to run as root: when the tests run as root (CI does), the cluster's programs run as the
/// unprivileged user `nobody` (`setpriv`), and the directory belongs to it. The binaries are found in
/// `STRATA_POSTGRES_BIN`, Debian's `/usr/lib/postgresql/<version>/bin` (15 first) or `PATH`.
///
/// For example:
/// ```swift
/// let cluster = try PostgresTestCluster.shared()  // started once per test process, stopped at exit
/// print(cluster.port, cluster.user)
/// ```
public final class PostgresTestCluster: Sendable {
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The superuser to connect as (no password).
    public let user = "strata"
    /// The database to connect to.
    public let database = "postgres"
    /// The cluster's directory (data in `data/`, the unix socket and log beside it).
    public let directory: String
    private let binaries: String
    private let runsAsNobody: Bool
    private let durable: Bool

    /// A failure to set up or run the cluster, with the program's output.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Creates and starts a new cluster of its own (for tests that stop, kill or restart the server).
    ///
    /// - Parameter durable: whether the server syncs (`fsync`, `full_page_writes` and `synchronous_commit` on,
    ///   PostgreSQL's defaults, for benchmarks); tests run without (default false).
    /// - Throws: ``Failure`` naming the program that failed and what it printed.
    public init(durable: Bool = false) throws {
        self.durable = durable
        binaries = try Self.findBinaries()
        runsAsNobody = getuid() == 0
        // Under /tmp when the programs run as nobody: a TMPDIR inside root's home would be out of its reach.
        let base = runsAsNobody ? "/tmp" : FileManager.default.temporaryDirectory.path
        Self.stopOrphans(in: base)
        directory = "\(base)/\(Self.directoryPrefix)\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try (Self.processIdentity(getpid()) ?? "\(getpid())").write(
            toFile: "\(directory)/\(Self.ownerFile)", atomically: true, encoding: .utf8)
        if runsAsNobody {
            guard chown(directory, 65534, 65534) == 0 else {
                throw Failure(description: "cannot give \(directory) to nobody: errno \(errno)")
            }
        }
        port = try Self.freePort()
        try run(
            "initdb", ["-D", "\(directory)/data", "-U", user, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
        try start()
        Self.started.withLock { $0.append(self) }
    }

    /// The cluster shared by the test process: started on first use, stopped when the process exits.
    ///
    /// - Throws: ``Failure`` when it cannot be started.
    public static func shared() throws -> PostgresTestCluster {
        try sharedCluster.withLock { cluster in
            if let cluster { return cluster }
            let made = try PostgresTestCluster()
            cluster = made
            atexit { PostgresTestCluster.stopAll() }
            return made
        }
    }

    private static let sharedCluster = Lock<PostgresTestCluster?>(nil)
    private static let started = Lock<[PostgresTestCluster]>([])

    /// Stops every cluster this process started and removes their directories.
    public static func stopAll() {
        for cluster in started.withLock({ $0 }) { cluster.destroy() }
    }

    /// The start of every cluster directory's name.
    static let directoryPrefix = "strata-pg-"
    /// The file in a cluster's directory naming the process that owns it.
    static let ownerFile = "owner"

    /// A process's PID and start time (clock ticks after boot, field 22 of `/proc/<pid>/stat`): a PID alone may
    /// have been reused by another process since. Nil when no such process runs.
    static func processIdentity(_ pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // The fields after the command name (which may hold spaces) start with field 3, the state.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19 else { return nil }
        return "\(pid) \(fields[19])"
    }

    /// Stops and removes the clusters under `base` whose owning test process is gone (it crashed or was killed
    /// before stopping them): a cluster directory whose `owner` file names a process that no longer runs (or a
    /// PID now used by a process that started at another time). Directories of running owners, and ones without
    /// an owner file yet (being made), are left alone.
    ///
    /// - Parameter base: the directory the clusters are made in.
    /// - Returns: the directories removed.
    @discardableResult
    public static func stopOrphans(in base: String) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: base) else { return [] }
        var removed: [String] = []
        for entry in entries where entry.hasPrefix(directoryPrefix) {
            let directory = "\(base)/\(entry)"
            guard let owner = try? String(contentsOfFile: "\(directory)/\(ownerFile)", encoding: .utf8),
                let pid = owner.split(separator: " ").first.flatMap({ pid_t($0) })
            else { continue }
            if processIdentity(pid) == owner { continue }
            if let binaries = try? findBinaries() {
                try? run(
                    "pg_ctl", ["-D", "\(directory)/data", "-w", "-m", "immediate", "stop"], directory: directory,
                    binaries: binaries, runsAsNobody: getuid() == 0)
            }
            try? FileManager.default.removeItem(atPath: directory)
            removed.append(directory)
        }
        return removed
    }

    /// Starts the server (again) and waits until it accepts connections.
    ///
    /// - Throws: ``Failure`` with the server log's tail when it does not start.
    public func start() throws {
        let options =
            "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(directory) "
            + (durable
                ? "-c fsync=on -c full_page_writes=on -c synchronous_commit=on "
                : "-c fsync=off -c full_page_writes=off ")
            + "-c max_connections=300 -c shared_buffers=\(durable ? "256MB" : "64MB")"
        do {
            try run(
                "pg_ctl",
                ["-D", "\(directory)/data", "-l", "\(directory)/log", "-w", "-t", "60", "-o", options, "start"])
        } catch {
            let log = (try? String(contentsOfFile: "\(directory)/log", encoding: .utf8)) ?? ""
            throw Failure(description: "\(error)\n\(log.suffix(2000))")
        }
    }

    /// Stops the server: `fast` ends sessions and rolls their transactions back; `immediate` is a crash (the
    /// server recovers from its WAL at the next start).
    ///
    /// - Throws: ``Failure`` when `pg_ctl` fails.
    public func stop(immediate: Bool = false) throws {
        try run("pg_ctl", ["-D", "\(directory)/data", "-w", "-m", immediate ? "immediate" : "fast", "stop"])
    }

    /// Stops the server if it runs and removes the cluster's directory.
    public func destroy() {
        try? stop(immediate: true)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs one of the cluster's programs (as `nobody` when this process is root) and waits for it.
    ///
    /// Through `posix_spawn` and bash, with every descriptor above 2 closed in the child, not `Process`: the server that
    /// `pg_ctl start` leaves running would inherit the descriptors `Process` watches to learn that its child
    /// ended (and any pipe another test has open), and keep them open as long as it runs.
    private func run(_ program: String, _ arguments: [String]) throws {
        try Self.run(program, arguments, directory: directory, binaries: binaries, runsAsNobody: runsAsNobody)
    }

    private static func run(
        _ program: String, _ arguments: [String], directory: String, binaries: String, runsAsNobody: Bool
    ) throws {
        let outputPath = "\(directory)/\(program).out"
        let program = "\(binaries)/\(program)"
        // bash closes every descriptor above 2, moves to the cluster's directory, then becomes the program.
        let script =
            "for fd in /proc/$$/fd/*; do n=${fd##*/}; if [ \"$n\" -gt 2 ]; then eval \"exec $n>&-\"; fi; done "
            + "2>/dev/null; cd \"$1\" || exit 70; shift; exec \"$@\""
        let executable = "/bin/bash"
        let argv =
            [executable, "-c", script, "bash", directory]
            + (runsAsNobody ? ["/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] : [])
            + [program] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LC_ALL"] = "C"
        environment["PGTZ"] = "UTC"
        let envp = environment.map { "\($0.key)=\($0.value)" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid: pid_t = 0
        let spawned = withCStrings(argv) { argvPointers in
            withCStrings(envp) { envpPointers in
                posix_spawn(&pid, executable, &actions, nil, argvPointers, envpPointers)
            }
        }
        guard spawned == 0 else { throw Failure(description: "cannot start \(executable): errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw Failure(description: "waitpid: errno \(errno)") }
        }
        // WIFEXITED and WEXITSTATUS, which Swift does not import.
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw Failure(
                description: "\(program) \(arguments.joined(separator: " ")) failed (status \(status)): \(printed)")
        }
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> T) -> T {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return body(pointers)
    }

    private static func findBinaries() throws -> String {
        if let path = ProcessInfo.processInfo.environment["STRATA_POSTGRES_BIN"] { return path }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted { ($0 == 15 ? 0 : 1, -$0) < ($1 == 15 ? 0 : 1, -$1) }
        for version in versions where FileManager.default.fileExists(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        throw Failure(
            description: "no PostgreSQL server programs in \(root)/*/bin or on PATH: run Scripts/install-deps")
    }

    /// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                guard bind(descriptor, socketAddress, length) == 0 else { return false }
                return getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
