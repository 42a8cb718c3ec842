// swift-tools-version:6.0
// winkd: face expressions from a webcam, as events on a Unix socket.
// The frame flows one way: Capture -> FaceTracking -> Expressions -> EventServer, with Overlay as a second
// consumer of tracked faces. Modules import only downward; each C target is imported by one module only.
import PackageDescription

/// Optimisation and SIMD flags for the C++ shims, applied in every configuration: dlib's shape predictor
/// is header-only template code and runs many times slower unoptimised (see ../shared/NOTES.md).
/// AVX2+FMA run on every x86-64 CPU since Haswell (2013) / Excavator; set WINK_PORTABLE=1 at build time
/// for a baseline x86-64 (SSE2) build on older machines.
let portable = Context.environment["WINK_PORTABLE"] == "1"
let simdFlags: [String] = portable ? [] : ["-mavx2", "-mfma"]
let cxxOptimise: [CXXSetting] = [
    .unsafeFlags(["-O3", "-fno-math-errno", "-I/usr/include/opencv4"] + simdFlags),
    // SwiftPM defines DEBUG in debug builds, which would switch dlib's asserts on and break its
    // build-configuration check against Debian's libdlib.
    .define("DLIB_DISABLE_ASSERTS"),
    .define("DLIB_NO_GUI_SUPPORT"),
]
/// OpenCV's image-processing libraries. Its file codecs (opencv_imgcodecs, opencv_videoio) are linked only
/// into the WinkCodecs plugin: they pull in ~240 shared libraries (GDAL, GDCM, poppler, GStreamer...) worth
/// about 55 MB of resident memory, which winkd does not need to serve a camera or a recording.
let openCV: [LinkerSetting] = [
    .linkedLibrary("opencv_core"), .linkedLibrary("opencv_imgproc"), .linkedLibrary("opencv_calib3d"),
]
/// FFmpeg, for reading recordings (CWinkMedia).
let ffmpeg: [LinkerSetting] = [
    .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("swscale"), .linkedLibrary("avutil"),
]

let package = Package(
    name: "winkd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "winkd", targets: ["winkd"]),
        .executable(name: "winkctl", targets: ["winkctl"]),
        // Loaded at run time (dlopen) by CWinkCodecsLoader, from beside the executable or ../lib/winkd/.
        .library(name: "WinkCodecs", type: .dynamic, targets: ["CWinkCodecs"]),
    ],
    targets: [
        // MARK: C and C++ behind plain C headers
        .target(
            name: "CWinkVision", cxxSettings: cxxOptimise,
            linkerSettings: [.linkedLibrary("dlib"), .linkedLibrary("lapack"), .linkedLibrary("blas"),
                             .linkedLibrary("m"), .linkedLibrary("stdc++"),
                             .linkedLibrary("crypto")] + openCV),
        .target(name: "CWinkCodecsLoader", linkerSettings: [.linkedLibrary("dl")]),
        // The plugin: nothing links it; it is built as the WinkCodecs product and opened with dlopen.
        .target(name: "CWinkCodecs", dependencies: ["CWinkCodecsLoader"], cxxSettings: cxxOptimise,
                linkerSettings: [.linkedLibrary("opencv_core"), .linkedLibrary("opencv_imgcodecs"),
                                 .linkedLibrary("opencv_videoio"), .linkedLibrary("stdc++")]),
        .target(name: "CWinkMedia", dependencies: ["CWinkCodecsLoader"], cxxSettings: cxxOptimise,
                linkerSettings: openCV + ffmpeg + [.linkedLibrary("z"), .linkedLibrary("stdc++")]),
        // Tests only: OpenCV's VideoCapture, the yardstick for CWinkMedia's FFmpeg decoding.
        .target(name: "CVideoCaptureReference", cxxSettings: cxxOptimise,
                linkerSettings: [.linkedLibrary("opencv_core"), .linkedLibrary("opencv_imgproc"),
                                 .linkedLibrary("opencv_videoio"), .linkedLibrary("stdc++")]),
        .target(name: "CWinkOverlay", dependencies: ["CWinkCodecsLoader"], cxxSettings: cxxOptimise,
                linkerSettings: openCV + [.linkedLibrary("stdc++")]),
        .target(name: "CLinux", cSettings: [.define("_GNU_SOURCE")], linkerSettings: [.linkedLibrary("v4l2")]),
        .target(name: "CWinkSocket", cSettings: [.define("_GNU_SOURCE")]),
        .target(name: "CEvdev", cSettings: [.unsafeFlags(["-I/usr/include/libevdev-1.0"])],
                linkerSettings: [.linkedLibrary("evdev")]),
        // winkctl monitor's full-screen view (Debian: libncurses-dev).
        .target(name: "CNcurses", linkerSettings: [.linkedLibrary("ncursesw")]),

        // MARK: Swift modules, bottom to top
        .target(name: "WinkCore"),
        .target(name: "Capture", dependencies: ["WinkCore", "CLinux", "CWinkMedia"]),
        .target(name: "FaceTracking", dependencies: ["WinkCore", "CWinkVision"]),
        .target(name: "Expressions", dependencies: ["WinkCore"]),
        .target(name: "EventServer", dependencies: ["WinkCore", "CWinkSocket"]),
        .target(name: "Overlay", dependencies: ["WinkCore", "CWinkOverlay"]),
        .target(name: "InputClient", dependencies: ["WinkCore", "EventServer", "CEvdev"]),
        // winkd: configuration, the frame pipeline, the daemon's lifecycle and sessions, systemd.
        .target(name: "WinkDaemon",
                dependencies: ["WinkCore", "Capture", "FaceTracking", "Expressions", "EventServer", "Overlay"]),
        .executableTarget(name: "winkd", dependencies: ["WinkDaemon"]),
        // winkctl's subcommands; they share CommonOptions, Configuration and FramePipeline with winkd.
        .target(name: "WinkctlCommands",
                dependencies: ["WinkCore", "Capture", "FaceTracking", "Expressions", "EventServer", "Overlay",
                               "InputClient", "WinkDaemon", "CNcurses"]),
        .executableTarget(name: "winkctl", dependencies: ["WinkctlCommands"]),
        // Fuzz targets: corpus replay drivers in a normal build, libFuzzer targets with
        // `-Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ` (README, "Fuzzing").
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzClientLine", dependencies: ["EventServer", "FuzzSupport"]),
        .executableTarget(name: "FuzzConfiguration", dependencies: ["WinkDaemon", "FuzzSupport"]),

        // MARK: Tests
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // The fake V4L2 camera, for the capture and daemon tests: apart from TestSupport so that the targets
        // that do not capture are not built and linked against Capture (libv4l2, FFmpeg, OpenCV).
        .target(name: "CaptureTestSupport", dependencies: ["Capture", "WinkCore"], path: "Tests/CaptureTestSupport"),
        .testTarget(name: "WinkCoreTests", dependencies: ["WinkCore"]),
        .testTarget(name: "CaptureTests", dependencies: ["WinkCore", "CaptureTestSupport", "Capture", "CVideoCaptureReference"]),
        .testTarget(name: "FaceTrackingTests", dependencies: ["TestSupport", "FaceTracking", "Capture"]),
        .testTarget(name: "ExpressionsTests", dependencies: ["TestSupport", "Expressions"]),
        .testTarget(name: "EventServerTests", dependencies: ["TestSupport", "EventServer"]),
        .testTarget(name: "OverlayTests", dependencies: ["TestSupport", "Overlay", "FaceTracking", "Capture"], exclude: ["Golden", "Resources"]),
        .testTarget(name: "WinkDaemonTests", dependencies: ["TestSupport", "CaptureTestSupport", "WinkDaemon", "WinkctlCommands"]),
        .testTarget(name: "EndToEndTests", dependencies: ["TestSupport", "WinkCore", "Capture"]),
        .testTarget(name: "InputClientTests", dependencies: ["TestSupport", "InputClient", "EventServer", "WinkCore"],
                    exclude: ["Resources"]),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"]),
    ],
    swiftLanguageModes: [.v5],
    cxxLanguageStandard: .cxx17
)
