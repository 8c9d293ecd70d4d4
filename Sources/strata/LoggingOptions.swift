import ArgumentParser
import Logging

/// The logging flags every subcommand shares, and the one place that bootstraps swift-log.
struct LoggingOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log at debug level (default: info) to standard error.")
    var verbose = false

    /// The level chosen by the flags.
    var level: Logger.Level { verbose ? .debug : .info }

    /// Sends every logger of the process (the engine's recovery and checkpoint messages included) to a plain
    /// standard-error handler at ``level``. Call once per process, before creating any `Logger`.
    func bootstrap() {
        let level = self.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
