// Fuzz target for the event socket's request side: bytes as a client would send them, cut into chunks,
// through `LineSplitter` and each complete line through `ClientMessage.parse`.
//
// Fuzzing build (`main` hands over to libFuzzer through LLVMFuzzerRunDriver; see the README):
//   swift build -c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ \
//       --product FuzzClientLine && .build/fuzz/release/FuzzClientLine -max_total_time=60 Tests/Fuzz/ClientLine
// Normal build: a driver that replays files or directories of inputs (a corpus, a crash) through the same
// function, so `swift build` links and a found crash stays reproducible without the fuzzer.
import EventServer
import Foundation

/// One input: the first byte picks the chunk size (1...256) the rest is fed in, like short `read(2)`s.
/// Checks the splitter's contract as it goes; a broken contract traps, which the fuzzer reports.
@inline(never)
func fuzzOne(_ input: UnsafeRawBufferPointer) {
    guard let first = input.first else { return }
    let chunk = Int(first) + 1
    let body = input.dropFirst()
    var splitter = LineSplitter(maximumLineBytes: 512)
    var ended = false
    var start = body.startIndex
    while start < body.endIndex {
        let end = min(start + chunk, body.endIndex)
        for item in splitter.append(body[start..<end]) {
            precondition(!ended, "an item after .tooLong")
            switch item {
            case .line(let line):
                precondition(!line.isEmpty && line.count <= 512 && !line.contains(0x0A), "bad line \(line.count)")
                if let message = try? ClientMessage.parse(line) {
                    if case .subscribe(_, let events, _) = message { _ = events.count }
                }
            case .tooLong:
                ended = true
            }
        }
        start = end
    }
    precondition(splitter.pendingByteCount <= 513, "buffered past the limit")
}

/// libFuzzer's entry for an input (libFuzzer's documented C interface).
let testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if WINK_FUZZ
/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size))`:
/// libFuzzer's main loop, callable from a program that has its own `main` (SwiftPM gives every
/// executable one, so libFuzzer's own `main` cannot be used).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

@main
enum Driver {
    static func main() {
        #if WINK_FUZZ
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
        #else
        replay()
        #endif
    }

    /// Runs every input named on the command line (files, or the files in a directory) once.
    static func replay() {
        var count = 0
        for path in CommandLine.arguments.dropFirst() {
            for file in ReplayFiles.list(path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("FuzzClientLine: cannot read \(file)\n".utf8))
                    exit(66)
                }
                data.withUnsafeBytes { fuzzOne($0) }
                count += 1
            }
        }
        print("FuzzClientLine: replayed \(count) input(s)")
    }
}

/// Files named on the command line, or the regular files directly inside a named directory.
enum ReplayFiles {
    static func list(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
              let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [path] }
        return names.sorted().map { path + "/" + $0 }
    }
}
