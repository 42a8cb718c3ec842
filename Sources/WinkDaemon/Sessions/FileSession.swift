import Capture
import EventServer
import Foundation
import WinkCore

/// Plays a recorded file (a video or a still image) on the processing thread, paced in real time or as
/// fast as the pipeline goes, once or looped.
///
/// A file that cannot be opened or read is reported (`source_failed`, the reason without the path, which
/// the line's `source` names) and tried again after 1, 2, 4, 8, 10, 10... s while clients listen. Not
/// thread-safe: the processing thread's.
final class FileSession: SourceSession {
    private let path: String
    private let pace: Pace
    private let loop: Bool
    private let host: SessionHost
    private let openRecording: (String) throws -> FrameSource
    private var backoff: Double
    /// Whether this opening's `source_damaged` has been sent (once, however often `--loop` replays it).
    private var damageReported = false

    /// - Parameters:
    ///   - path: the recording.
    ///   - openRecording: opens it (`openMediaFile(path:)`; tests script a source).
    init(path: String, pace: Pace, loop: Bool, host: SessionHost,
         openRecording: @escaping (String) throws -> FrameSource) {
        self.path = path
        self.pace = pace
        self.loop = loop
        self.host = host
        self.openRecording = openRecording
        backoff = host.environment.backoffInitial
    }

    func run() -> SessionEnd {
        let publisher = host.publisher
        do {
            let source = try openRecording(path)
            backoff = host.environment.backoffInitial
            damageReported = false
            publisher.publish(status: StatusLine(state: .sourceOpened, source: source.name))
            let ended = try stream(source)
            source.close()
            publisher.closeOutput()
            // The recording ends as it ends: a face that had already left is lost, as analyze says; one still
            // in view gets no made-up faceLost. Clients then get bye.
            if ended && !loop {
                publisher.finishInput()
                return .endOfInput
            }
            publisher.endFace()
            if !ended { publisher.publish(status: StatusLine(state: .sourceClosed, source: source.name)) }
        } catch {
            // A source that fails (a looped file gone) ends the face and whatever it was doing: a client
            // holding a key for `smile` must see it end.
            publisher.endFace()
            let message = describeError(error)
            // The line names the source already; the message says only what is wrong with it (logged as a
            // warning with the status line).
            let reason = describeMessage(message, besides: path)
            publisher.publish(status: StatusLine(state: .sourceFailed, source: path, message: reason))
            host.signals.wait(seconds: backoff)
            backoff = min(backoff * 2, host.environment.backoffMaximum)
        }
        return .idle
    }

    /// Reads and processes frames until the source ends (true) or streaming should stop (false). For
    /// `loop`, the file restarts with indices and times continuing.
    private func stream(_ first: FrameSource) throws -> Bool {
        var source = first
        let publisher = host.publisher
        let buffer = PixelBuffer(wantsColor: publisher.wantsColor)
        let clock = host.environment.clock
        var pacer = RecordingPacer()
        var indexOffset = 0, timeOffset = 0.0, last: FrameInfo?
        var idleSince: UInt64?
        while host.keepStreaming(idleSince: &idleSince) {
            buffer.wantsColor = publisher.wantsColor
            guard var info = try source.read(into: buffer) else {
                reportDamage(source)
                guard loop, let l = last else { return true }
                source.close()
                source = try openRecording(source.name)
                indexOffset = l.index + 1
                timeOffset = l.time + 1 / (source.nominalFrameRate ?? 30)
                publisher.restartTracking()
                continue
            }
            info.index += indexOffset
            info.time += timeOffset
            if pace == .realtime {
                // Released at its own timestamp; a gap in the recording is waited out for at most a second
                // and the schedule goes on from there (see `RecordingPacer`).
                let now = clock.nanoseconds()
                let due = pacer.due(time: info.time, now: now)
                var remaining = due > now ? due - now : 0
                while remaining > 0 && !host.signals.stopRequested {
                    usleep(UInt32(min(remaining, 100_000_000) / 1000))
                    host.publisher.observer?.daemonIsAlive()
                    let later = clock.nanoseconds()
                    remaining = due > later ? due - later : 0
                }
                // The release time, never later than the moment the frame's lines are written.
                info.monotonicNanoseconds = min(max(due, now), clock.nanoseconds())
            }
            last = info
            // A still image is one instant, judged as `winkctl analyze` judges it.
            try publisher.publish(frame: buffer, info: info, still: source.isStill)
        }
        return false
    }

    /// Sends `source_damaged` (and logs a warning) for a recording read to its end that is damaged, once.
    private func reportDamage(_ source: FrameSource) {
        guard !damageReported, let damage = source.damage else { return }
        damageReported = true
        host.publisher.log(.warning, "\(source.name): \(damage)")
        host.publisher.publish(status: StatusLine(state: .sourceDamaged, source: source.name, message: damage))
    }
}

/// When a recording's frames are released under `--pace realtime`: at their own presentation times, like
/// a camera, on `CLOCK_MONOTONIC`.
///
/// The schedule is anchored at the first frame. A jump in presentation time between two frames larger than
/// `maximumPause` (a recording with a gap, a timestamp reset, time going backwards) is waited out for at
/// most `maximumPause`, and the schedule is anchored again at that frame; so is a frame released more than
/// `maximumPause` late (a stalled machine): the frames after it keep their own spacing instead of coming a
/// second apart, or in a burst. A value type with no I/O.
struct RecordingPacer {
    /// The longest pause between two frames, and the most a release may lag, in nanoseconds (1 s).
    static let maximumPause: UInt64 = 1_000_000_000

    /// The frame at `time` (s) is due at `nanoseconds`; nil before the first frame.
    private var anchor: (time: Double, nanoseconds: UInt64)?
    private var previous: (time: Double, due: UInt64) = (0, 0)

    /// When the frame with presentation time `time` (seconds) is due, given the clock reads `now`.
    mutating func due(time: Double, now: UInt64) -> UInt64 {
        var due: UInt64
        if let anchor {
            let step = time - previous.time
            if !(step >= 0) || step * 1e9 > Double(Self.maximumPause) {
                due = previous.due + (step > 0 ? Self.maximumPause : 0)
                self.anchor = (time, due)
            } else {
                due = anchor.nanoseconds + UInt64(((time - anchor.time) * 1e9).rounded())
            }
            if now > due && now - due > Self.maximumPause {
                due = now
                self.anchor = (time, due)
            }
        } else {
            due = now
            anchor = (time, now)
        }
        previous = (time, due)
        return due
    }
}
