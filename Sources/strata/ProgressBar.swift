import Foundation
import StrataStorage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-line progress bar on standard error, drawn only when standard error is a terminal (so that
/// redirected output and tests see nothing of it), at most ten times a second, and erased at the end.
///
/// For example: `verifying [###########.........]  55%  551,002 / 1,000,000`.
final class ProgressBar {
    private let enabled: Bool
    private var lastDraw: ContinuousClock.Instant?
    private var drawn = false
    private let clock = ContinuousClock()
    private static let width = 30

    init(enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.enabled = enabled
    }

    /// The closure to hand to a long engine operation, or nil when there is nothing to draw.
    var handler: ProgressHandler? {
        guard enabled else { return nil }
        return { [self] progress in update(progress) }
    }

    func update(_ progress: OperationProgress) {
        let now = clock.now
        let finished = progress.total > 0 && progress.completed >= progress.total
        if let lastDraw, now - lastDraw < .milliseconds(100), !finished { return }
        lastDraw = now
        let filled = Int(progress.fraction * Double(Self.width))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: Self.width - filled)
        let percent = String(Int(progress.fraction * 100)).leftPadded(3)
        let counts = progress.total > 0 ? "  \(Output.count(progress.completed)) / \(Output.count(progress.total))" : ""
        write("\r\u{1B}[2K\(progress.phase) [\(bar)] \(percent)%\(counts)")
        drawn = true
    }

    /// Erases the bar.
    func finish() {
        guard drawn else { return }
        write("\r\u{1B}[2K")
        drawn = false
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

extension String {
    /// The string with spaces in front up to `width` characters.
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
