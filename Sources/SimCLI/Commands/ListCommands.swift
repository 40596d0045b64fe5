import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli check FILE|NAME...`: parse and lint, including CloudKit-safety.
enum CheckCommand {
  static let spec = CommandSpec(
    name: "check", summary: "Parse and lint scenarios without running them (CloudKit-safety included).",
    discussion: "Exit 0 when every file parses (safety findings are warnings), 65 when one does not.",
    positionals: [.init(name: "FILE|NAME", help: "Scenario files or names.", variadic: true)],
    options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    var worst: ExitCode = .success
    var results: [JSONValue] = []
    for item in args.positionals {
      let file: ScenarioFile
      do throws(CommandExit) {
        file = try ScenarioOptions.load(item, console: console)
      } catch {
        if error.code == .dataError || worst == .success { worst = error.code }
        results.append(["file": .string(item), "ok": false])
        continue
      }
      let findings = file.schema.safetyFindings()
      results.append([
        "file": .string(item), "ok": true,
        "findings": .array(
          findings.map {
            [
              "type": .string($0.type), "field": $0.field.map { .string($0) } ?? .null, "problem": .string($0.problem.rawValue),
              "message": .string($0.message),
            ]
          }),
      ])
      if args.value("--format") != "json" {
        console.out(
          "\(item): ok (\(file.devices.count) devices, \(file.schema.types.count) types, \(file.timeline.count) timeline lines, policy \(file.policy))\n"
        )
        for f in findings { console.out("  warning: \(f.message)\n") }
      }
    }
    if args.value("--format") == "json" { console.out(JSONValue.array(results).serialized() + "\n") }
    return worst
  }
}
