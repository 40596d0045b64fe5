import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli check FILE|NAME...`: parse and lint, including CloudKit-safety.
enum CheckCommand {
  static let spec = CommandSpec(
    name: "check", summary: "Parse and lint scenarios without running them (CloudKit-safety included).",
    discussion: """
      A file that parses with no CloudKit warning is "ok"; one with warnings is listed with them,
      each at its declaration (the scenario's line, or the model file's line for types read with
      'schema from', worded as 'sim-cli import' words them) with Apple's rule and the fix. Exit 0
      when every file parses (warnings do not fail, unless --strict: then 1), 65 when one does
      not, 64 when one cannot be found. With --format json, one object per file on stdout: its
      parse diagnostics (file, line, column, message, suggestion) or its findings, and nothing on
      stderr.
      """,
    positionals: [.init(name: "FILE|NAME", help: "Scenario files or names.", variadic: true)],
    options: [Formats.option, .flag("--strict", "Fail (exit 1) when a file has a CloudKit warning.")],
    examples: ["sim-cli check scenarios/*.scenario", "sim-cli check notes.scenario --strict"])

  static let command = Command(spec: spec) { args, console in
    let json = args.value("--format") == "json"
    let strict = args.has("--strict")
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
            object["parsed"] = false
            results.append(.object(object))
          } else {
            results.append(["file": .string(item), "ok": false, "parsed": false, "error": .string(sentence(error.description))])
          }
        } else {
          code = ScenarioOptions.report(error, console: console)
        }
        worst = worse(worst, code)
        continue
      }
      let findings = file.schema.safetyFindings().map { Finding($0, in: file, item: item) }
      results.append([
        "file": .string(item), "ok": .bool(findings.isEmpty), "parsed": true, "warnings": .int(Int64(findings.count)),
        "findings": .array(findings.map(\.json)),
      ])
      if strict, !findings.isEmpty { worst = worse(worst, .failure) }
      if !json {
        let summary = "\(file.devices.count) devices, \(file.schema.types.count) types, \(file.timeline.count) timeline lines, policy \(file.policy)"
        if findings.isEmpty {
          console.out("\(item): ok (\(summary))\n")
        } else {
          console.out("\(item): \(findings.count) CloudKit warning\(findings.count == 1 ? "" : "s") (\(summary)):\n")
          for f in findings {
            console.out(f.rendered.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { "  \($0)\n" }.joined())
          }
        }
      }
    }
    if json { console.out(JSONValue.array(results).serialized() + "\n") }
    return worst
  }

  /// The more serious of two outcomes: a file that does not parse (65), then one not found (64),
  /// then a warning under --strict (1).
  static func worse(_ a: ExitCode, _ b: ExitCode) -> ExitCode {
    func rank(_ c: ExitCode) -> Int {
      switch c {
      case .dataError: 3
      case .usage: 2
      case .success: 0
      default: 1
      }
    }
    return rank(b) > rank(a) ? b : a
  }

  /// A schema finding with the place of the declaration it is about: for a type read from the
  /// app's model, the model file's line and column; else the scenario's line of the field, of
  /// the type, or of `deployed` (a type missing from it).
  struct Finding {
    var finding: SchemaFinding
    var line: Int?
    /// `FILE:LINE[:COLUMN]`, or the scenario's name when no line is known.
    var place: String

    init(_ finding: SchemaFinding, in file: ScenarioFile, item: String) {
      self.finding = finding
      if let model = finding.modelLocation {
        line = model.line
        place = model.description
      } else {
        line = finding.field.flatMap { file.line(ofType: finding.type, field: $0) } ?? file.line(ofType: finding.type) ?? file.deployedLine
        place = item + (line.map { ":\($0)" } ?? "")
      }
    }

    /// `PLACE: warning: MESSAGE`, then `  Apple's rule: …` and `  fix: …` (each when there is
    /// one): the lines `sim-cli import` prints for the same finding.
    var rendered: String {
      var text = "\(place): warning: \(finding.message)\n"
      if !finding.appleRule.isEmpty { text += "  Apple's rule: \(finding.appleRule)\n" }
      if !finding.fix.isEmpty { text += "  fix: \(finding.fix)\n" }
      return text
    }

    var json: JSONValue {
      var object: [String: JSONValue] = [
        "type": .string(finding.type), "field": finding.field.map { .string($0) } ?? .null, "problem": .string(finding.problem.rawValue),
        "message": .string(finding.message), "fix": .string(finding.fix), "appleRule": .string(finding.appleRule), "severity": "warning",
        "line": line.map { .int(Int64($0)) } ?? .null,
      ]
      if let model = finding.modelLocation {
        object["file"] = .string(model.file)
        object["column"] = .int(Int64(model.column))
      }
      return .object(object)
    }
  }
}
