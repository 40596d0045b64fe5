import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli fuzz`: random workloads against a policy, every failure shrunk to a scenario.
enum FuzzCommand {
  static let spec = CommandSpec(
    name: "fuzz", summary: "Fuzz a policy over random workloads; shrink every failure to a scenario file.",
    discussion: """
      Each seed draws its own fault profile (swarm testing) and timeline of intents, shaped by
      --scenario's devices and schema or by the built-in workload (2–5 devices, the essay's
      Note / Stroke / Preference schema). Results are the same for any --jobs; with --out they
      are JSON Lines, one record per seed in seed order, flushed as written. Exit 1 when a seed
      fails.
      """,
    options: [
      .value("--scenario", "FILE|NAME", "Shape workloads from this scenario's devices and schema."),
      .value("--policy", "SPEC", "The policy under test (default append-only)."),
      .value("--seeds", "A..B", "The seeds to run (default 1..1000; with --time, 1.. onwards)."),
      .value("--intents", "N", "Intents per seed (default 50)."),
      .value("--time", "DURATION", "Stop after this much real time, e.g. 8h."),
      .value("--jobs", "N", "Parallel workers; the core count by default."),
      .value("--shard", "K/N", "Run only the seeds with seed mod N == K-1."),
      .value("--out", "FILE.jsonl", "Write one JSON line per seed."),
      .flag("--resume", "Continue an interrupted campaign from --out."),
      .value("--max-failures", "N", "Stop after N failing seeds."),
      .value("--minimize-to", "DIR", "Write shrunk scenario files here (else they are printed)."),
      Formats.option,
    ],
    examples: [
      "sim-cli fuzz --policy cloudkit-default --seeds 1..10000 --out results.jsonl --minimize-to failures/",
      "sim-cli fuzz --policy append-only --time 8h --shard 3/16 --out shard-3.jsonl",
    ])

  static let command = Command(spec: spec) { args, console in try run(args, console) }

  static func usage(_ message: String, _ console: Console) -> CommandExit {
    console.err(UsageError.other(message).render(command: spec))
    return CommandExit(code: .usage)
  }

  static func run(_ args: ParsedArguments, _ console: Console) throws -> ExitCode {
    let policy = try ScenarioOptions.policy(args, spec: spec, console: console) ?? (try! PolicySpec.parse("append-only").get())
    var shape = WorkloadShape()
    if let s = args.value("--scenario") { shape.base = try ScenarioOptions.workloadBase(s, console: console) }
    shape.intents = Int(try IntegerOption.require(args, "--intents", default: UInt64(shape.intents), in: 1...1_000_000, spec: spec, console: console))

    // Seeds, time, shard.
    var timeLimit: Double?
    if let t = args.value("--time") {
      guard case .success(let d) = SimDuration.parse(t), d > .zero else {
        throw usage("invalid value '\(t)' for '--time': expected a duration such as 30s, 10m or 8h.", console)
      }
      timeLimit = Double(d.nanoseconds) / 1e9
    }
    var plan = SeedPlan(lower: 1, upper: timeLimit == nil ? 1_000 : .max)
    if let text = args.value("--seeds") {
      guard let r = SeedRange.parse(text) else {
        throw usage("invalid value '\(text)' for '--seeds': expected A..B with A <= B, e.g. 1..10000.", console)
      }
      plan.lower = r.lower
      plan.upper = r.upper
    }
    if let text = args.value("--shard") {
      let parts = text.split(separator: "/")
      guard parts.count == 2, let k = Count.parse(String(parts[0]), in: 1...1_000_000), let n = Count.parse(String(parts[1]), in: 1...1_000_000),
        k <= n
      else {
        throw usage("invalid value '\(text)' for '--shard': expected K/N with 1 <= K <= N, e.g. 3/16.", console)
      }
      plan.shard = (k, n)
    }
    let jobs = try IntegerOption.jobs(args, spec: spec, console: console)
    var maxFailures: Int?
    if args.value("--max-failures") != nil {
      maxFailures = Int(try IntegerOption.require(args, "--max-failures", default: 1, in: 1...UInt64(Int.max), spec: spec, console: console))
    }
    let minimizeTo = args.value("--minimize-to")
    if let dir = minimizeTo {
      do {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      } catch {
        throw usage("cannot create '\(dir)' for '--minimize-to': \(error.localizedDescription)", console)
      }
    }

    // Output file and resume.
    var previousFailures = 0
    var output: JSONLinesFile?
    if let path = args.value("--out") {
      let file: JSONLinesFile
      do {
        file = try JSONLinesFile(path: path, resume: args.has("--resume"), policy: policy.description, scenario: shape.name, plan: plan)
      } catch {
        if error.code == .usage { throw usage(error.description + ".", console) }
        console.err("Error: \(error.description).\n")
        throw CommandExit(code: error.code)
      }
      for record in file.existing {
        plan.skip.insert(record.seed)
        if record.violations > 0 { previousFailures += 1 }
      }
      output = file
    } else if args.has("--resume") {
      throw usage("--resume needs --out FILE.jsonl: the campaign to continue.", console)
    }

    let campaign = FuzzCampaign(shape: shape, policy: policy, seeds: plan, jobs: jobs, shrink: true)
    let json = args.value("--format") == "json"
    let progress = Progress(total: plan.count, console: console, previous: plan.skip.count)
    let clock = WallClock()
    let tally = Tally(previousFailures: previousFailures)
    let outputBox = output
    // A hidden hook for the resume test: die by SIGKILL right after the N-th record is written,
    // a deterministic point in place of a timed kill.
    let killAfter = ProcessInfo.processInfo.environment["SIM_CLI_TEST_KILL_AFTER"].flatMap(Int.init)
    let (limit, cap, workload) = (timeLimit, maxFailures, shape)
    campaign.run(
      shouldStop: { limit.map { clock.elapsedSeconds >= $0 } ?? false },
      emit: { outcome in
        var record = outcome.record
        var shrunkPath: String?
        if let shrunk = outcome.shrunk, let dir = minimizeTo {
          let path = (dir as NSString).appendingPathComponent(shrunk.file.source)
          do {
            try AtomicFile.write(shrunk.text, to: path)
            shrunkPath = path
          } catch {
            console.err("warning: \(error)\n")
          }
          record.minimized = shrunkPath
        }
        if let outputBox, !outputBox.append(record.jsonLine) { return false }  // the disk is full: stop, resumable
        let failures = tally.add(record)
        if let killAfter, tally.count == killAfter { kill(getpid(), SIGKILL) }
        if record.failed && !json {
          console.out(report(outcome, path: shrunkPath, policy: policy, shape: workload))
        }
        if record.failed { tally.failed.append(record) }
        progress.tick(failures: failures, elapsed: clock.elapsedSeconds)
        return cap.map { failures < $0 } ?? true
      })
    if let output, let reason = output.failure {
      throw CLIError.io(
        what: "'\(output.path)'", reason: reason,
        hint:
          "\(tally.count) record\(tally.count == 1 ? "" : "s") of this run were written; free space, then continue with the same command and --resume."
      )
    }
    let elapsed = clock.elapsedSeconds
    let done = tally.count
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    if json {
      let summary = CampaignSummary(
        policy: policy.description, scenario: shape.name, seeds: done, failing: tally.failures, seedsPerSecond: Int(rate.rounded()),
        failures: tally.failed)
      console.out(summary.jsonLine + "\n")
    } else {
      let resumed = plan.skip.isEmpty ? "" : " (+\(plan.skip.count) from \(args.value("--out")!))"
      console.out(
        "fuzz \(policy) on \(shape.name): \(done) seeds\(resumed), \(tally.failures) failing · \(BenchCommand.group(rate)) seeds/s · \(BenchCommand.format2(elapsed))s with \(jobs) job\(jobs == 1 ? "" : "s")\n"
      )
    }
    return tally.failures == 0 ? .success : .failure
  }

  /// The failure report: the profile first, the anomalies, the minimal scenario, the commands.
  static func report(_ o: FuzzOutcome, path: String?, policy: PolicySpec, shape: WorkloadShape) -> String {
    var out = "FAIL seed \(o.record.seed) · policy \(policy) · workload \(shape.name)\n"
    out += "  profile: \(o.profile)\n"
    for a in o.violations.prefix(5) {
      let place = a.place
      out += "  • \(a.kind.rawValue) \(place): \(a.explanation)\n"
    }
    if o.violations.count > 5 { out += "  … and \(o.violations.count - 5) more\n" }
    let again = "sim-cli fuzz --seeds \(o.record.seed)..\(o.record.seed) --policy '\(policy)'" + (shape.base.map { " --scenario \($0.source)" } ?? "")
    if let shrunk = o.shrunk {
      if let path {
        out += "  minimal scenario (\(shrunk.file.timeline.count) timeline lines, keeps \(shrunk.kind.rawValue)): \(path)\n"
        out += "  reproduce: sim-cli run \(path)\n"
      } else {
        out += "  minimal scenario (\(shrunk.file.timeline.count) timeline lines, keeps \(shrunk.kind.rawValue)):\n"
        for line in shrunk.text.split(separator: "\n", omittingEmptySubsequences: false) { out += "    | \(line)\n" }
      }
    }
    out += "  again:     \(again)\n"
    return out
  }
}

/// Counts shared by the emitting threads (emission is serialized by the campaign).
final class Tally: @unchecked Sendable {
  var count = 0
  var failures: Int
  var failed: [FuzzRecord] = []
  init(previousFailures: Int) { failures = previousFailures }
  func add(_ r: FuzzRecord) -> Int {
    count += 1
    if r.failed { failures += 1 }
    return failures
  }
}

/// The stderr progress line, at most once a second.
final class Progress: @unchecked Sendable {
  let total: UInt64?
  let console: Console
  var done = 0
  var lastPrint = 0.0
  let previous: Int

  init(total: UInt64?, console: Console, previous: Int) {
    self.total = total
    self.console = console
    self.previous = previous
  }

  func tick(failures: Int, elapsed: Double) {
    done += 1
    guard elapsed - lastPrint >= 1 else { return }
    lastPrint = elapsed
    let rate = Double(done) / max(elapsed, 1e-9)
    var line =
      "fuzz: \(done + previous)\(total.map { "/\(Int($0) + previous)" } ?? "") seeds · \(BenchCommand.group(rate)) seeds/s · \(failures) failing · \(Int(elapsed))s elapsed"
    if let total {
      let left = Double(Int(total) - done) / max(rate, 1e-9)
      line += " · ETA \(Int(left.rounded()))s"
    }
    console.err(line + "\n")
  }
}

/// `fuzz --format json`: the campaign in one object, its failing records as `--out` writes them.
struct CampaignSummary: Encodable {
  var policy: String
  var scenario: String
  var seeds: Int
  var failing: Int
  var seedsPerSecond: Int
  var failures: [FuzzRecord]

  var jsonLine: String {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self)
  }
}
