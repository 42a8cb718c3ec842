import Capture
import Foundation
import WinkCore

/// `winkctl evaluate LABELS.json...`: runs the pipeline on each labelled clip and scores it (SPEC.md
/// "Labels files"). Prints per event name and in total the true and false positives, misses, precision,
/// recall and F1. Exit 0, or 1 when the total F1 is below `--min-f1`.
enum EvaluateCommand {
    static let command = WinkctlMain.Command(
        synopsis: "evaluate LABELS.json... [--config FILE] [--model FILE] [--min-f1 X] [--verbose]", run: run)

    static func run(_ args: inout Arguments) throws -> ExitCode {
        let options = try CommonOptions(&args)
        let minF1: Double? = try args.number("--min-f1", in: 0.0...1.0)
        let verbose = args.flag("--verbose")
        var files: [String] = []
        while let f = args.positional() { files.append(f) }
        try args.finish()
        guard !files.isEmpty else { throw UsageError("evaluate: which labels files? usage: winkctl \(command.synopsis)") }

        var totals: [String: Score] = [:]
        for file in files {
            let labels = try ClipLabels.load(path: file)
            var configuration = options.configuration
            if labels.mirrored { configuration.mirrored = true }
            let pipeline = try CommonOptions(configuration: configuration, modelPath: options.modelPath).makePipeline()
            let source = try openMediaFile(path: labels.video)
            let result = score(events: try pipeline.events(of: source), labels: labels)
            let t = result.total
            print("\(file): tp=\(t.truePositives) fp=\(t.falsePositives) missed=\(t.misses) f1=\(format(t.f1))")
            if verbose || t.f1 < 1 { for line in result.findings { print("  \(line)") } }
            for (name, s) in result.byEvent { totals[name] = totals[name, default: Score()] + s }
        }
        print("")
        print(pad("event", 12) + pad("tp", 5) + pad("fp", 5) + pad("missed", 8) + pad("precision", 11) + pad("recall", 8) + "f1")
        for name in totals.keys.sorted() {
            let s = totals[name]!
            print(pad(name, 12) + pad("\(s.truePositives)", 5) + pad("\(s.falsePositives)", 5) + pad("\(s.misses)", 8)
                  + pad(format(s.precision), 11) + pad(format(s.recall), 8) + format(s.f1))
        }
        let total = totals.values.reduce(Score(), +)
        print(pad("total", 12) + pad("\(total.truePositives)", 5) + pad("\(total.falsePositives)", 5)
              + pad("\(total.misses)", 8) + pad(format(total.precision), 11) + pad(format(total.recall), 8)
              + format(total.f1))
        if let minF1, total.f1 < minF1 {
            printError("winkctl: total F1 \(format(total.f1)) is below --min-f1 \(minF1)")
            return .failure
        }
        return .ok
    }

    static func format(_ x: Double) -> String { String(format: "%.3f", x) }
    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
}
