// The driver the fuzz targets share. In a fuzzing build (`-Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ`,
// see the README) `main` hands the target over to libFuzzer's loop; in a normal build it replays files or
// directories of inputs (a corpus, a crash) through the same function, so `swift build` links the target
// and a crash the fuzzer found stays reproducible without the fuzzer.
import Foundation

/// The function under test, set once by `FuzzDriver.run` before the first input (one per process).
nonisolated(unsafe) private var target: ((UnsafeRawBufferPointer) -> Void)?

/// libFuzzer's entry for an input (its documented C interface: `int (*)(const uint8_t *, size_t)`);
/// a C function pointer carries no context, so it reaches the target through the global.
private let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    target?(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if WINK_FUZZ
/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size))`:
/// libFuzzer's main loop, callable from a program that has its own `main` (SwiftPM gives every
/// executable one, so libFuzzer's own `main` cannot be used).
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

/// The fuzz targets' shared entry point (see the file's opening comment).
public enum FuzzDriver {
    /// Runs `fuzzOne` under libFuzzer (fuzzing build) or over every input named on the command line
    /// (files, or the regular files directly inside a named directory, in name order), then exits:
    /// 0 after a replay, 66 (EX_NOINPUT) when an input cannot be read. `fuzzOne` reports a broken
    /// contract by trapping. `name` prefixes the driver's messages.
    public static func run(name: String, _ fuzzOne: @escaping (UnsafeRawBufferPointer) -> Void) -> Never {
        target = fuzzOne
        #if WINK_FUZZ
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
        var count = 0
        for path in CommandLine.arguments.dropFirst() {
            for file in replayFiles(path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("\(name): cannot read \(file)\n".utf8))
                    exit(66)
                }
                data.withUnsafeBytes { _ = testOneInput($0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
                count += 1
            }
        }
        print("\(name): replayed \(count) input(s)")
        exit(0)
        #endif
    }

    /// `path` itself, or the regular files directly inside it when it is a directory.
    static func replayFiles(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [path] }
        return names.sorted().map { path + "/" + $0 }
    }
}
