import Capture
import FaceTracking
import Foundation
import Overlay
import WinkCore
import WinkDaemon

/// `winkctl overlay --layout L.json INPUT -o OUTPUT [--model FILE]`: draws a face layout on every face of a
/// still image (written as PNG or JPEG) or of every frame of a video (written with the same size, frame count
/// and rate: .mp4, .m4v, .mov and .mkv as H.264 with the input's audio copied, .avi as Motion JPEG). `winkctl overlay
/// --benchmark [--frames N]` times the renderer alone (three layers, 640x480). The output is written under a
/// temporary name and renamed over OUTPUT when complete (`PendingOutput`): a failure, or a stop by SIGINT,
/// SIGTERM or SIGHUP (exit 128 + the signal, as if killed by it), leaves what was at OUTPUT as it was.
enum OverlayCommand {

    static let command = WinkctlMain.Command(
        spec: CommandSpec(
            name: "overlay",
            summary: "draw a face layout (images on landmarks) on a still image or every frame of a video",
            operands: [("INPUT", "a still image or a video file")],
            options: [
                OptionSpec(
                    "--layout", .file("FILE"),
                    "the overlay layout (JSON: layers per face feature); required, except with --benchmark"),
                OptionSpec(
                    "--output", aliases: ["-o"], .file("OUTPUT"),
                    "where to write the result (.png, .jpg; a video: .mp4, .m4v, .mov, .mkv as H.264 with the input's "
                        + "audio, .avi as Motion JPEG); required"),
                CommonOptions.modelSpec,
                OptionSpec("--mirrored", "the input is a mirror image (a selfie view)"),
                OptionSpec("--benchmark", "time the renderer alone (three layers on 640x480) instead; no INPUT"),
                OptionSpec("--frames", .text("N"), "frames for --benchmark, 10...1000000", default: "2000"),
                .quiet,
            ]),
        run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        if args.flag("--benchmark") {
            let frames = try args.number("--frames", in: 10...1_000_000) ?? 2000
            try args.finish()
            let ms = try OverlayBenchmark.run(frames: frames)
            print(
                String(
                    format: "overlay: %.3f ms per 640x480 frame (3 layers, median of 5 runs of %d frames)",
                    ms, max(1, frames / 5)))
            return .ok
        }
        let layoutPath = try args.option("--layout")
        let output = try args.option("--output", or: "-o")
        let model = try args.option("--model")
        let mirrored = args.flag("--mirrored")
        let quiet = args.flag("--quiet")
        let input = args.positional()
        try args.finish()
        guard let layoutPath else {
            throw UsageError("overlay: --layout is required; \(command.usage)")
        }
        guard let input else { throw UsageError("overlay: which input file? \(command.usage)") }
        guard let output else { throw UsageError("overlay: -o OUTPUT is required; \(command.usage)") }
        try OutputFile.checkCreatable(output)  // before the model loads and the video is read
        guard let kind = OverlayOutputKind(path: output) else {
            throw UsageError(
                "overlay: \(output): unknown output extension (use .png, .jpg, .jpeg, .mp4, .m4v, .mov, .avi or .mkv)")
        }

        try refuseOverwriting(output, command: "overlay", what: "the output", option: "-o", inputs: [("input", input)])
        // Configuration first (cheap, exit 78/66/65), then the input, then the 1 s model load.
        let layout = try OverlayLayout.load(path: layoutPath)
        try refuseOverwriting(
            output, command: "overlay", what: "the output", option: "-o",
            inputs: layout.layers.map { ("layout's image \($0.image)", $0.image) } + [("layout", layoutPath)])
        let renderer = try OverlayRenderer(layout: layout)
        let source = try openMediaFile(path: input)
        defer { source.close() }
        let isStill = source.isStill
        if kind == .image && !isStill {
            throw UsageError("overlay: \(input) is a video; give OUTPUT a video extension (.mp4, .avi, ...)")
        }
        let modelPath = model ?? ProcessInfo.processInfo.environment["WINK_MODEL"] ?? ShapePredictor.debianModelPath
        var settings = TrackerSettings()
        settings.mirrored = mirrored
        let tracker = FaceTracker(predictor: try ShapePredictor(path: modelPath), settings: settings)
        // Stills: one x2 upsampling finds faces from about 40 px; video frames (webcam-like, large faces) are
        // searched at their own size to keep the run near real time.
        let upsample = isStill ? 1 : 0
        // .mp4/.m4v/.mov/.mkv: H.264 with the input's audio copied, through FFmpeg (write errors are FFmpeg's
        // own). .avi: OpenCV's VideoWriter, which reports no write errors, so the file is read back (exit 74
        // if incomplete).
        var video: VideoFileWriter?
        var videoSize: (width: Int, height: Int)?
        let progress = RunProgress(command: "overlay", quiet: quiet)
        progress.begin(input, expectedFrames: source.expectedFrameCount)
        // Polled once a frame, so the partly written output is removed and the file already at OUTPUT stays.
        StopSignals.install()
        PendingOutput.stopRequested = { _ in StopSignals.caught }
        let summary: OverlayRunSummary
        do {
            summary = try OverlayRun.run(
                source: source, output: output, renderer: renderer, mirrored: mirrored,
                openVideo: { path, width, height, rate in
                    videoSize = (width, height)
                    guard VideoFileWriter.handles(path: path) else { return nil }
                    let writer = try VideoFileWriter(
                        path: path, width: width, height: height, framesPerSecond: rate,
                        audioFrom: input)
                    if let note = writer.fallbackNote { printError("overlay: \(note)") }
                    video = writer
                    return writer
                },
                readBack: { try VideoFileSource(path: $0) }
            ) { buffer in
                if let signal = StopSignals.caught { throw PendingOutput.Stopped(signal: signal) }
                let faces = try tracker.detectAll(buffer, upsample: upsample)
                progress.frame(face: !faces.isEmpty, events: 0)
                return faces
            }
        } catch let stopped as PendingOutput.Stopped {
            // Stopped between frames, or while a still was written (its write held the signal off).
            let signal = stopped.signal
            progress.clear()
            video = nil  // the writer's temporary file is removed as it goes
            printError("overlay: stopped by \(StopSignals.name(signal)); \(output) was left as it was")
            exit(128 + signal)
        }
        progress.clear()
        progress.warnIfDamaged(source)
        var details = ""
        if video == nil, kind == .video, let (width, height) = videoSize, (width | height) & 1 == 1 {
            // OpenCV's Motion JPEG writer (.avi) takes even sizes only and drops the odd row or column.
            let written = "\(width & ~1)x\(height & ~1)"
            printError("overlay: \(output): Motion JPEG in .avi takes even sizes: the \(width)x\(height) frames were "
                       + "written as \(written) (.mp4, .mov and .mkv keep the size)")
        }
        if let video {
            let codec = video.encoder == "libx264" ? "H.264 (libx264)" : video.encoder
            var audio = video.audioStreams == 1 ? "1 audio stream copied" : "\(video.audioStreams) audio streams copied"
            // A stream the container does not take is left out: said, not just counted ("0 audio streams").
            let inputAudio = ((try? MediaStreams.of(path: input)) ?? []).filter { $0.kind == .audio }
            if inputAudio.count > video.audioStreams {
                let container = "." + URL(fileURLWithPath: output).pathExtension.lowercased()
                let codecs = Array(Set(inputAudio.map(\.codec))).sorted().joined(separator: ", ")
                audio = "\(video.audioStreams) of \(inputAudio.count) audio streams copied; "
                    + (video.audioStreams == 0 ? "\(container) does not take \(codecs)"
                       : "\(container) does not take the others (\(codecs) in the input)")
            }
            details = " (\(codec), \(audio))"
        }
        if !quiet {
            printError("overlay: \(summary.frames) frame(s), \(summary.faces) face(s) drawn -> \(output)\(details)")
        }
        return .ok
    }
}

/// Refuses (exit 64) an output that names one of the command's own inputs, which it would replace: "analyze:
/// me.png: the plot would overwrite the input; choose another --plot".
/// - Parameters:
///   - what: the output's name in the message ("the plot", "the profile").
///   - inputs: each input's description and path (nil: not given).
func refuseOverwriting(
    _ output: String, command: String, what: String, option: String, inputs: [(String, String?)]
) throws {
    for case let (name, path?) in inputs where sameFile(path, output) {
        throw UsageError("\(command): \(output): \(what) would overwrite the \(name); choose another \(option)")
    }
}

/// Whether two paths name the same existing file (same device and inode, through symlinks).
func sameFile(_ a: String, _ b: String) -> Bool {
    var sa = stat()
    var sb = stat()
    guard stat(a, &sa) == 0, stat(b, &sb) == 0 else { return false }
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
}
