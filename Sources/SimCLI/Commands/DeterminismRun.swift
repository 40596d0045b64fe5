import Foundation
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli run FILE --app NAME --check-determinism`: one run here, one in a child process of this
/// same tool (where `Set` and `Dictionary` hash with another seed), compared step by step.
enum DeterminismRun {
  static func check(_ file: ScenarioFile, app: AppUnderTest, seed: UInt64?, args: ParsedArguments, console: Console) -> ExitCode {
    let (mine, myHash) = ScenarioRunner.behaviour(of: file, app: app, seed: seed)
    let other: (steps: [AppBehaviourLog.Step], hash: String)
    let runsIn: String
    if let child = childRun(args) {
      other = child
      runsIn = "this process and another"
    } else {
      other = ScenarioRunner.behaviour(of: file, app: app, seed: seed)
      runsIn = "this process, twice (another process could not be started)"
    }
    let check = ScenarioRunner.compare(mine, myHash, other.steps, other.hash)
    console.out("\(file.name) — app \(app.name), seed \(seed ?? file.seed), runs in \(runsIn)\n")
    console.out(check.text + "\n")
    return check.deterministic ? .success : .failure
  }

  /// The same command in a new process of this tool, writing its behaviour log instead of
  /// checking; nil when the process cannot be started or fails.
  static func childRun(_ args: ParsedArguments) -> (steps: [AppBehaviourLog.Step], hash: String)? {
    guard let tool = Bundle.main.executableURL else { return nil }
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("sim-cli-behaviour-\(getpid()).log")
    defer { try? FileManager.default.removeItem(at: log) }
    var arguments = ["run"] + args.positionals
    for option in ["--seed", "--app"] { if let v = args.value(option) { arguments += [option, v] } }
    arguments += ["--behaviour-log", log.path]
    let process = Process()
    process.executableURL = tool
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    process.waitUntilExit()
    guard process.terminationReason == .exit, [0, 1].contains(process.terminationStatus),
      let text = try? String(contentsOf: log, encoding: .utf8)
    else { return nil }
    return parse(text)
  }

  /// A behaviour log as text: a `trace HASH` line, then a line per step — nanoseconds, device,
  /// input, outcome and disk, separated by tabs (a tab, newline or backslash in a value is escaped).
  static func render(_ steps: [AppBehaviourLog.Step], hash: String) -> String {
    var out = "trace \(hash)\n"
    for s in steps {
      out += "\(s.time.nanoseconds)\t\(escape(s.device))\t\(escape(s.input))\t\(escape(s.outcome))\t\(escape(s.disk))\n"
    }
    return out
  }

  static func parse(_ text: String) -> (steps: [AppBehaviourLog.Step], hash: String)? {
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last == "" { lines.removeLast() }
    guard let first = lines.first, first.hasPrefix("trace ") else { return nil }
    var steps: [AppBehaviourLog.Step] = []
    for line in lines.dropFirst() {
      let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
      guard parts.count == 5, let ns = Int64(parts[0]) else { return nil }
      steps.append(
        .init(
          time: VirtualTime(nanoseconds: ns), device: unescape(parts[1]), input: unescape(parts[2]), outcome: unescape(parts[3]),
          disk: unescape(parts[4])))
    }
    return (steps, String(first.dropFirst(6)))
  }

  static func escape(_ s: String) -> String {
    s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t").replacingOccurrences(of: "\n", with: "\\n")
  }

  static func unescape(_ s: Substring) -> String {
    var out = ""
    var escaped = false
    for c in s {
      if escaped {
        out.append(c == "t" ? "\t" : c == "n" ? "\n" : c)
        escaped = false
      } else if c == "\\" {
        escaped = true
      } else {
        out.append(c)
      }
    }
    return out
  }
}
