// Fuzz target for winkd's configuration parser: arbitrary bytes as a configuration file through
// `Configuration.parse(_:path:)`, which must return a configuration or throw `Configuration.Invalid`.
//
// Fuzzing build (`main` hands over to libFuzzer through LLVMFuzzerRunDriver; see the README):
//   swift build -c release --scratch-path .build/fuzz -Xswiftc -sanitize=fuzzer -Xswiftc -DWINK_FUZZ \
//       --product FuzzConfiguration && .build/fuzz/release/FuzzConfiguration -max_total_time=60 Tests/Fuzz/Configuration
// Normal build: a driver that replays files or directories of inputs through the same function.
import Foundation
import WinkDaemon

/// One input: parsed as a whole file. Anything thrown but `Configuration.Invalid`, an `Invalid` with no
/// problem, or a problem that spans lines (each must be one line, COMMON rules) traps.
@inline(never)
func fuzzOne(_ input: UnsafeRawBufferPointer) {
    do {
        _ = try Configuration.parse(Data(input), path: "fuzz.json")
    } catch let invalid as Configuration.Invalid {
        precondition(!invalid.problems.isEmpty, "Invalid with no problem")
        // What a person sees (exit 78's stderr) is one line per problem.
        precondition(invalid.description.split(separator: "\n", omittingEmptySubsequences: false).count
                     == invalid.problems.count, "a problem spans lines")
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
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
            var isDirectory: ObjCBool = false
            let files: [String]
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                files = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
            } else {
                files = [path]
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("FuzzConfiguration: cannot read \(file)\n".utf8))
                    exit(66)
                }
                data.withUnsafeBytes { fuzzOne($0) }
                count += 1
            }
        }
        print("FuzzConfiguration: replayed \(count) input(s)")
    }
}
