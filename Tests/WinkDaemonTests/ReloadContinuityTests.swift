import Capture
import Expressions
import Foundation
import Testing
import WinkCore

@testable import WinkDaemon

extension ModelTests {
    /// A newcomer's finding: every SIGHUP reload, even of an unchanged file, ended the face (`faceLost`, then
    /// `faceFound` 0.55 s later, a held smile ended and begun again), so a `faceLost` command (a screen lock)
    /// ran on `systemctl reload`. A reload now carries the face on (`FramePipeline(continuing:)`).
    @Suite
    struct ReloadContinuityTests {
        static let clip = (0..<72).map { SplicedSource.Piece.clip("single_face.mp4", $0) }

        /// single_face.mp4 with a reload to `reloaded` before frame `at`: the events, as "name:phase@frame".
        func events(reloadingTo reloaded: Configuration?, at: Int = 28) throws -> [String] {
            try rawEvents(reloadingTo: reloaded, at: at).map {
                "\($0.event)\($0.phase.map { ":" + $0.rawValue } ?? "")@\($0.frame)"
            }
        }

        func rawEvents(reloadingTo reloaded: Configuration?, at: Int) throws -> [ExpressionEvent] {
            var p = FramePipeline(configuration: Configuration(), predictor: sharedPredictor)
            let source = try SplicedSource(Self.clip)
            let buffer = PixelBuffer()
            var out: [ExpressionEvent] = []
            var last = FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
            while let info = try source.read(into: buffer) {
                if info.index == at, let reloaded {
                    p = FramePipeline(continuing: p, configuration: reloaded, predictor: sharedPredictor, frame: last)
                    out += p.engine.events
                }
                _ = try p.process(buffer, info: info)
                out += p.engine.events
                last = info
            }
            p.finish()
            out += p.engine.events
            return out
        }

        @Test func anUnchangedReloadChangesNothing() throws {
            let straight = try events(reloadingTo: nil)
            #expect(straight.contains("smile:began@23") && straight.contains("blink:occurred@30"), "\(straight)")
            // Mid-smile and mid-blink: the face, the held smile and the blink under way all carry on.
            #expect(try events(reloadingTo: Configuration()) == straight)
        }

        @Test func aReloadOfOtherRowsEndsHeldExpressionsButKeepsTheFace() throws {
            var changed = Configuration()
            let smile = try #require(changed.analyzers.firstIndex { $0.event == "smile" })
            changed.analyzers[smile].enter = 0.45
            let reloaded = try events(reloadingTo: changed)
            #expect(reloaded.filter { $0.hasPrefix("face") } == ["faceFound@0"], "\(reloaded)")
            // The smile held at the reload ends there (its row changed) and begins again under the new row.
            #expect(reloaded.contains("smile:ended@27"), "\(reloaded)")
            let again = reloaded.filter { $0.hasPrefix("smile:began@") }.dropFirst()
            #expect(again.count == 1 && again.allSatisfy { Int($0.split(separator: "@")[1])! <= 40 }, "\(reloaded)")
            #expect(reloaded.contains("blink:occurred@30"), "\(reloaded)")
            // Its `ended` carries the row's value at the last frame (the smile was still up), not 0.
            let ended = try #require(
                try rawEvents(reloadingTo: changed, at: 28).first { $0.event == "smile" && $0.phase == .ended })
            #expect(ended.frame == 27 && (ended.value ?? 0) > 0.45, "\(ended)")
        }

        /// A newcomer's finding: a reload changing only the winkLeft row ended the held smile (`ended` with value
        /// 0 while the smile read 0.95) and began it again: a hold-mode key let up and pressed again. Unchanged
        /// rows now carry on.
        @Test func aReloadOfOneRowKeepsTheOthersUnderWay() throws {
            var changed = Configuration()
            let wink = try #require(changed.analyzers.firstIndex { $0.event == "winkLeft" })
            changed.analyzers[wink].enter = 0.72
            let straight = try events(reloadingTo: nil)
            #expect(try events(reloadingTo: changed) == straight)
            // Reordered rows are the same rows.
            var reordered = Configuration()
            reordered.analyzers.reverse()
            #expect(try events(reloadingTo: reordered) == straight)
        }

        @Test func aReloadKeepsWhatWasLearnedOfTheFaceWhenTheCalibrationIsTheSame() throws {
            let p = FramePipeline(configuration: Configuration(), predictor: sharedPredictor)
            let source = try SplicedSource(Array(Self.clip[0..<40]))
            let buffer = PixelBuffer()
            var last = FrameInfo(index: 0, time: 0, monotonicNanoseconds: 0)
            while let info = try source.read(into: buffer) {
                _ = try p.process(buffer, info: info)
                last = info
            }
            var sameCalibration = Configuration()
            sameCalibration.quality.maximumYaw = 25
            let kept = FramePipeline(
                continuing: p, configuration: sameCalibration, predictor: sharedPredictor, frame: last)
            #expect(kept.engine.calibration === p.engine.calibration && kept.tracker === p.tracker)
            var otherWindow = Configuration()
            otherWindow.calibration.windowSeconds = 30
            otherWindow.tracker.detectionWidth = 400
            let fresh = FramePipeline(
                continuing: p, configuration: otherWindow, predictor: sharedPredictor, frame: last)
            #expect(fresh.engine.calibration !== p.engine.calibration && fresh.engine.calibration.samples == 0)
            #expect(fresh.tracker !== p.tracker && fresh.engine.facePresent)
        }
    }
}

/// What a reload says of the settings that wait for a restart: the log level and the socket's mode and
/// size, compared with what winkd started with (a newcomer's finding: compared with the configuration before
/// the reload, a reload back to the running settings still said "socket settings apply at the next start",
/// and a new `logLevel` was not mentioned).
struct StartupOnlyNoteTests {
    @Test func onlyWhatDiffersFromTheRunningSettingsIsNamed() {
        var started = Configuration()
        started.maximumClients = 64
        let options = DaemonOptions(source: nil, socketPath: "/s", configuration: started)
        var fresh = Configuration()
        #expect(Daemon.startupOnlyNote(fresh, running: options) == "")
        fresh.maximumClients = 5
        #expect(Daemon.startupOnlyNote(fresh, running: options) == " (the socket settings apply at the next start)")
        fresh.logLevel = .error
        #expect(Daemon.startupOnlyNote(fresh, running: options)
            == " (the log level and socket settings apply at the next start)")
        fresh.maximumClients = 64
        #expect(Daemon.startupOnlyNote(fresh, running: options) == " (the log level applies at the next start)")
        fresh.logLevel = .info  // what runs: the default
        #expect(Daemon.startupOnlyNote(fresh, running: options) == "")
        // --log-level wins over the file, before and after a restart: nothing waits.
        var flagged = options
        flagged.logLevel = .debug
        fresh.logLevel = .error
        #expect(Daemon.startupOnlyNote(fresh, running: flagged) == "")
    }
}
