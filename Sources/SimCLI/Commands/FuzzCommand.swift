import Foundation
import Replica
import Scenarios
import Simulator

/// `sim-cli fuzz`: random workloads against a policy.
enum FuzzCommand {
  static let spec = CommandSpec(
    name: "fuzz", summary: "Fuzz a policy over random workloads; shrink every failure to a scenario file.",
    options: [
      .value("--scenario", "FILE|NAME", "Shape workloads from this scenario's devices and schema."),
      .value("--policy", "SPEC", "The policy under test (default append-only)."),
      .value("--seeds", "A..B", "The seeds to run (default 1..1000)."),
      .value("--time", "DURATION", "Stop after this much real time, e.g. 8h."),
      .value("--jobs", "N", "Parallel workers; the core count by default."),
      .value("--shard", "K/N", "Run only the seeds with seed mod N == K-1."),
      .value("--out", "FILE.jsonl", "Write one JSON line per seed."),
      .flag("--resume", "Continue an interrupted campaign from --out."),
      .value("--max-failures", "N", "Stop after N failing seeds."),
      .value("--minimize-to", "DIR", "Write shrunk scenario files here."),
      Formats.option,
    ])

  static let command = Command(spec: spec) { args, console in
    let policy = (try? PolicySpec.parse(args.value("--policy") ?? "append-only").get())!
    var shape = WorkloadShape()
    if let s = args.value("--scenario") {
      do throws(CommandExit) { shape.base = try ScenarioOptions.load(s, console: console) } catch { return error.code }
    }
    if let d = ProcessInfo.processInfo.environment["FUZZ_SHOW"], let n = UInt64(d) {
      console.out(FuzzDebug.show(n, policy))
      return .success
    }
    let range = args.value("--seeds").flatMap { SeedRange.parse($0) } ?? SeedRange(lower: 1, upper: 1000)
    var failures = 0
    for seed in range.lower...range.upper {
      let c = Fuzzer.run(seed: seed, shape: shape, policy: policy)
      if c.record.failed {
        failures += 1
        console.out("seed \(seed): \(c.report.verdict)\n  profile: \(c.profile)\n")
        for a in c.report.violations.prefix(3) { console.out("  • \(a.kind.rawValue) \(a.record ?? ""): \(a.explanation)\n") }
      }
    }
    console.out("\(failures) failing seeds of \(range.upper - range.lower + 1)\n")
    return failures == 0 ? .success : .failure
  }
}

/// `A..B` (inclusive) or a single seed.
struct SeedRange: Hashable, Sendable {
  var lower: UInt64
  var upper: UInt64

  static func parse(_ text: String) -> SeedRange? {
    let parts = text.components(separatedBy: "..")
    if parts.count == 1, let n = UInt64(parts[0]) { return SeedRange(lower: n, upper: n) }
    guard parts.count == 2, let a = UInt64(parts[0]), let b = UInt64(parts[1]), a <= b else { return nil }
    return SeedRange(lower: a, upper: b)
  }
}

enum FuzzDebug {
  static func show(_ seed: UInt64, _ policy: PolicySpec) -> String {
    let c = Fuzzer.run(seed: seed, shape: WorkloadShape(), policy: policy)
    var out = c.file.rendered() + "\n" + c.report.text
    if case .success(var back) = Scenario.parse(c.file.rendered(), source: c.file.source) {
      var orig = c.file
      orig.timeline = orig.timeline.map { var e = $0; e.location = SourceLocation(line: 0, column: 0); return e }
      back.timeline = back.timeline.map { var e = $0; e.location = SourceLocation(line: 0, column: 0); return e }
      back.expectations = []
      back.policyLocation = nil
      back.clocks = back.clocks.map { var c = $0; c.location = SourceLocation(line: 0, column: 0); return c }
      out += "\nroundtrip equal: \(back == orig)\n"
      if back.timeline != orig.timeline {
        for (a, b) in zip(back.timeline, orig.timeline) where a != b { out += "  differs: \(a) vs \(b)\n"; break }
      }
      out += "latency \(back.latency == orig.latency) loss \(back.loss == orig.loss) schema \(back.schema == orig.schema) policy \(back.policy == orig.policy) about \(back.about == orig.about) clocks \(back.clocks == orig.clocks) push \(back.push == orig.push) autosync \(back.autosync == orig.autosync)\n"
    }
    return out
  }
}
