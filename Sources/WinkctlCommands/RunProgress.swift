import Foundation
import WinkCore
import WinkDaemon

/// Progress and the closing summary of a long offline run (`analyze`, `evaluate`, `bench`, `overlay`).
///
/// While stderr is a terminal, one line there is rewritten in place at most five times a second
/// (`analyze clip.mp4: 412/900 frames (46%), 310 frames/s`) and erased before anything else is printed or at
/// the end; when stderr is a file or a pipe (a script, journald) no progress is written, so logs stay clean.
/// The summary (`analyze: 900 frames, 870 with a face, 12 events in 3.1 s (290 frames/s)`) goes to stderr in
/// both cases, unless `quiet`; stdout stays the command's own output (NDJSON, a report). Not thread-safe.
final class RunProgress {
    /// What the summary starts with (the command's name).
    let command: String
    private let quiet: Bool
    private let terminal: Bool
    private let clock = SystemClock()
    private let started: UInt64
    private var lastDrawn: UInt64 = 0
    private var shown = false
    /// What the progress line names (a file) and how many frames it is expected to have.
    private var current: (name: String, expected: Int?, done: Int) = ("", nil, 0)
    private(set) var frames = 0
    private(set) var framesWithFace = 0
    private(set) var events = 0
    /// The events come from recorded lines (`evaluate --events-from`), not from frames: the summary counts
    /// events only ("evaluate: 0 frames, 0 with a face, ..." said nothing true).
    var readsRecordedLines = false

    /// - Parameters:
    ///   - quiet: no progress and no summary (`--quiet`).
    ///   - terminal: whether stderr is a terminal (isatty(2)); tests pass it.
    init(command: String, quiet: Bool, terminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.command = command
        self.quiet = quiet
        self.terminal = terminal && !quiet
        started = clock.nanoseconds()
    }

    /// A new input starts (a clip of `evaluate`, a pass of `bench`).
    func begin(_ name: String, expectedFrames: Int?) {
        current = (name, expectedFrames, 0)
    }

    /// Event occurrences decided outside a counted frame (or counted separately from it).
    func frame(events: Int) {
        self.events += events
    }

    /// One frame done: whether it had a face and how many event occurrences it decided.
    func frame(face: Bool, events: Int) {
        frames += 1
        current.done += 1
        if face { framesWithFace += 1 }
        self.events += events
        guard terminal else { return }
        let now = clock.nanoseconds()
        if now - lastDrawn >= 200_000_000 {
            lastDrawn = now
            draw(now)
        }
    }

    /// Erases the progress line (before other stderr output, and at the end).
    func clear() {
        guard terminal, shown else { return }
        writeAll("\r\u{1B}[K", to: STDERR_FILENO)
        shown = false
    }

    /// The closing line's text: frames, frames with a face, events, seconds and frames per second, and
    /// `extra` when given.
    func summary(extra: String? = nil) -> String {
        let seconds = Double(clock.nanoseconds() - started) / 1e9
        let counted = "\(events) event\(events == 1 ? "" : "s")"
        var text = readsRecordedLines
            ? "\(command): \(counted) read from recorded lines"
            : "\(command): \(frames) frame\(frames == 1 ? "" : "s"), \(framesWithFace) with a face, "
                + "\(counted) in \(String(format: "%.1f", seconds)) s"
        if !readsRecordedLines && seconds > 0 && frames > 1 {
            text += String(format: " (%.0f frames/s)", Double(frames) / seconds)
        }
        if let extra { text += "; " + extra }
        return text
    }

    /// Erases the progress line and prints the summary on stderr (unless quiet).
    func finish(extra: String? = nil) {
        clear()
        guard !quiet else { return }
        printError(summary(extra: extra))
    }

    private func draw(_ now: UInt64) {
        let seconds = Double(now - started) / 1e9
        var text = "\(command) \((current.name as NSString).lastPathComponent): \(current.done)"
        if let expected = current.expected, expected > 0 {
            text += "/\(expected) frames (\(min(100, current.done * 100 / expected))%)"
        } else {
            text += " frames"
        }
        if seconds > 0 { text += String(format: ", %.0f frames/s", Double(frames) / seconds) }
        writeAll("\r\u{1B}[K\(text)", to: STDERR_FILENO)
        shown = true
    }
}

extension RunProgress {
    /// Says what was wrong with `source` once read (`FrameSource.damage`): one warning line on stderr, also
    /// under --quiet, e.g. "analyze: clip.mp4: 3 damaged packets skipped (later frames are numbered as
    /// decoded)". The run's results for the frames that decoded stand (exit code unchanged).
    func warnIfDamaged(_ source: FrameSource) {
        guard let damage = source.damage else { return }
        clear()
        printError("\(command): \(source.name): \(damage)")
    }
}
