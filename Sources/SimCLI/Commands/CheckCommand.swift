import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli check FILE|NAME...`: parse and lint, including CloudKit-safety.
enum CheckCommand {
  static let spec = CommandSpec(
    name: "check", summary: "Parse and lint scenarios without running them (CloudKit-safety included).",
    discussion: """
      Exit 0 when every file parses (safety findings are warnings), 65 when one does not, 64 when
      one cannot be found. With --format json, one object per file on stdout: its parse
      diagnostics (file, line, column, message, suggestion) or its lint findings (with the line
      of the declaration), and nothing on stderr.
      """,
    positionals: [.init(name: "FILE|NAME", help: "Scenario files or names.", variadic: true)],
    options: [Formats.option])

  static let command = Command(spec: spec) { args, console in
    let json = args.value("--format") == "json"
    var worst: ExitCode = .success
    var results: [JSONValue] = []
    for item in args.positionals {
      let file: ScenarioFile
      do throws(Scenario.LoadError) {
        file = try ScenarioLocator.load(item)
      } catch {
        let code: ExitCode
        if json {
          code = if case .invalid = error { .dataError } else { .usage }
          if case .invalid(let errors) = error, case .object(var object) = errors.json {
            object["file"] = .string(item)
            object["ok"] = false
            results.append(.object(object))
          } else {
            results.append(["file": .string(item), "ok": false, "error": .string(sentence(error.description))])
          }
        } else {
          code = ScenarioOptions.report(error, console: console)
        }
        if code == .dataError || worst == .success { worst = code }
        continue
      }
      let findings = file.schema.safetyFindings().map { Finding($0, in: file) }
      results.append(["file": .string(item), "ok": true, "findings": .array(findings.map(\.json))])
      if !json {
        console.out(
          "\(item): ok (\(file.devices.count) devices, \(file.schema.types.count) types, \(file.timeline.count) timeline lines, policy \(file.policy))"
            + (findings.isEmpty ? "" : "; \(findings.count) CloudKit warning\(findings.count == 1 ? "" : "s"):") + "\n"
        )
        for f in findings {
          console.out("  \(item)\(f.line.map { ":\($0)" } ?? ""): warning: \(f.finding.message)\n")
          console.out("    Apple's rule: \(f.finding.appleRule)\n")
        }
      }
    }
    if json { console.out(JSONValue.array(results).serialized() + "\n") }
    return worst
  }

  /// A schema finding with the line of the declaration it is about: the field's, else the
  /// type's, else the `deployed` line (a type missing from it).
  struct Finding {
    var finding: SchemaFinding
    var line: Int?

    init(_ finding: SchemaFinding, in file: ScenarioFile) {
      self.finding = finding
      line = finding.field.flatMap { file.line(ofType: finding.type, field: $0) } ?? file.line(ofType: finding.type) ?? file.deployedLine
    }

    var json: JSONValue {
      [
        "type": .string(finding.type), "field": finding.field.map { .string($0) } ?? .null, "problem": .string(finding.problem.rawValue),
        "message": .string(finding.message), "appleRule": .string(finding.appleRule), "severity": "warning",
        "line": line.map { .int(Int64($0)) } ?? .null,
      ]
    }
  }
}
