import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli fuzz`: random workloads against a policy; failing seeds grouped by signature, the
/// first seed of each shrunk to a scenario.
enum FuzzCommand {
  static let spec = CommandSpec(
    name: "fuzz", summary: "Fuzz a policy over random workloads; shrink each kind of failure to a scenario file.",
    discussion: """
      Each seed draws its own fault profile (swarm testing) and timeline of intents, shaped by
      --scenario's devices and schema or by the built-in workload (2–5 devices, the essay's
      Note / Stroke / Preference schema). Failing seeds are grouped by signature: their
      violation kinds and the policy axes that usually cause them. Each signature is printed
      once, at its first seed, with that seed shrunk to a minimal scenario; the summary counts
      seeds by kind and by signature. Results are the same for any --jobs; with --out they are
      JSON Lines, one record per seed in seed order, flushed as written. Ctrl-C or SIGTERM stops
      cleanly, prints the summary and the command that continues (exit 130 or 143; a second
      Ctrl-C stops at once). Exit 1 when a seed fails.
      """,
    options: [
      .value("--scenario", "FILE|NAME", "Shape workloads from this scenario's devices and schema."),
      .value("--policy", "SPEC", "The policy under test (default append-only)."),
      ScenarioOptions.appOption,
      .value("--seeds", "A..B", "The seeds to run (default 1..1000; with --time, 1.. onwards: A.. is open)."),
      .value("--intents", "N", "Intents per seed, 1 to 100000 (default 50)."),
      .flag("--sharing", "Draw sharing too: two accounts, a share, permission changes, removals (with --app: an app that shares)."),
      .flag("--assets", "Draw the photo-album workload: assets of 8 KB to 32 MB, bandwidth, staging purges, files changed while they upload."),
      .value("--time", "DURATION", "Stop after this much real time, e.g. 8h."),
      .value("--jobs", "N", "Parallel workers; the core count by default."),
      .value("--shard", "K/N", "Run only the seeds with seed mod N == K-1."),
      .value("--out", "FILE.jsonl", "Write one JSON line per seed."),
      .flag("--resume", "Continue an interrupted campaign from --out."),
      .value("--max-failures", "N", "Stop after N failing seeds."),
      .value("--minimize-to", "DIR", "Write one shrunk scenario file per signature here (else they are printed)."),
      .flag("--timings", "Add each seed's wall-clock time to its --out record (for sim-cli report's seeds/s plot)."),
      .flag("--quiet", "Print only the final summary line (and errors)."),
      .flag("--verbose", "Print every failing seed too, not only each signature's first."),
      Formats.option,
    ],
    examples: [
      "sim-cli fuzz --policy cloudkit-default --seeds 1..10000 --out results.jsonl --minimize-to failures/",
      "sim-cli fuzz --policy append-only --time 8h --shard 3/16 --out shard-3.jsonl",
    ])

  static let command = Command(spec: spec) { args, console in try run(args, console) }

  /// A campaign is its policy, workload shape (the scenario's content, not only its name;
  /// `--intents`; an app's schema) and seed plan, and the version that ran it: the records say
  /// the policy and the scenario's name, and the plan is checked line by line; the rest shows in
  /// the trace hash. The first and last records' seeds are run again: a different hash means
  /// another campaign, refused before anything is appended.
  static func checkSameCampaign(_ file: JSONLinesFile, _ campaign: FuzzCampaign, _ console: Console) throws {
    // The command's campaign never shrinks (`shrink: false`): a seed costs one run.
    guard let first = file.existing.first, let last = file.existing.last else { return }
    for record in first.seed == last.seed ? [first] : [first, last] {
      let hash = campaign.outcome(of: record.seed).record.traceHash
      guard hash == record.traceHash else {
        console.err(
          "Error: '\(file.path)' was written by another campaign: its seed \(record.seed) has trace hash \(record.traceHash), and this command's seed \(record.seed) has \(hash) (another --intents, another content of the scenario or the app's schema, or another version of sim-cli); --resume continues a campaign with the command that started it, or use another --out.\n"
        )
        throw CommandExit(code: .usage)
      }
    }
  }

  static func usage(_ message: String, _ console: Console) -> CommandExit {
    console.err(UsageError.other(message).render(command: spec))
    return CommandExit(code: .usage)
  }

  static func run(_ args: ParsedArguments, _ console: Console) throws -> ExitCode {
    let app = try ScenarioOptions.app(args, spec: spec, console: console)
    let policy =
      app != nil
      ? AppUnderTest.judgedAs : try ScenarioOptions.policy(args, spec: spec, console: console) ?? (try! PolicySpec.parse("append-only").get())
    var shape = WorkloadShape()
    if let s = args.value("--scenario") { shape.base = try ScenarioOptions.workloadBase(s, console: console) }
    // An app's workload: drawn from its own schema when it states one.
    if let app { shape = shape.forApp(app) }
    if args.has("--sharing") {
      if let app, !app.sharesRecords {
        throw usage(
          "--sharing with --app \(app.name): the app does not say it shares (SimApp.sharesRecords): it has no engine for the shared database, so it would never see what is shared with its user. Use an app that shares (SharingNotesApp), or no --app.",
          console)
      }
      shape.sharing = true
    }
    if args.has("--assets") {
      guard app == nil, shape.base == nil else {
        throw usage(
          "--assets draws the built-in photo album; with --scenario or --app the workload's schema is theirs (asset fields in it are drawn).", console
        )
      }
      shape.schema = WorkloadShape.albumSchema
    }
    shape.intents = Int(try IntegerOption.require(args, "--intents", default: UInt64(shape.intents), in: 1...100_000, spec: spec, console: console))

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
      guard let r = SeedRange.parse(text, open: timeLimit != nil) else {
        let open = text.hasSuffix("..") && timeLimit == nil ? " (an open range A.. needs --time)" : ""
        throw usage("invalid value '\(text)' for '--seeds': expected A..B with A <= B, e.g. 1..10000\(open).", console)
      }
      plan.lower = r.lower
      plan.upper = r.upper
    }
    if let text = args.value("--shard") {
      let parts = text.split(separator: "/")
      guard parts.count == 2, let k = Count.parse(String(parts[0]), in: 1...UInt64.max), let n = Count.parse(String(parts[1]), in: 1...UInt64.max),
        k <= n
      else {
        throw usage("invalid value '\(text)' for '--shard': expected K/N with 1 <= K <= N, e.g. 3/16.", console)
      }
      guard n <= 1_000_000 else {
        throw usage("invalid value '\(text)' for '--shard': at most 1000000 shards (N), each with its own --out; this is \(n).", console)
      }
      plan.shard = (k, n)
    }
    let jobs = try IntegerOption.jobs(args, spec: spec, console: console)
    var maxFailures: Int?
    if args.value("--max-failures") != nil {
      maxFailures = Int(try IntegerOption.require(args, "--max-failures", default: 1, in: 1...UInt64(Int.max), spec: spec, console: console))
    }
    let (quiet, verbose) = (args.has("--quiet"), args.has("--verbose"))
    let timings = args.has("--timings")
    if timings && args.value("--out") == nil { throw usage("--timings needs --out FILE.jsonl: the records it adds the times to.", console) }
    if quiet && verbose { throw usage("--quiet and --verbose cannot be used together.", console) }
    let minimizeTo = args.value("--minimize-to")
    if let dir = minimizeTo {
      do {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
      } catch {
        throw usage("cannot create '\(dir)' for '--minimize-to': \(error.localizedDescription)", console)
      }
    }

    // Output file and resume.
    var findings = FuzzFindings(settings: policy.settings, app: app != nil)
    var output: JSONLinesFile?
    // Watched from here: a signal while a long results file is checked stops cleanly too.
    let interrupt = InterruptWatch()
    defer { interrupt.stop() }
    if let path = args.value("--out") {
      let file: JSONLinesFile
      do {
        file = try JSONLinesFile(
          path: path, resume: args.has("--resume"), policy: app?.policyName ?? policy.description, scenario: shape.name, plan: plan,
          take: { findings.add($0, minimized: $0.minimized, earlier: true) }, stop: { interrupt.received })
      } catch {
        if error.code == .usage { throw usage(error.description + ".", console) }
        console.err("Error: \(error.description).\n")
        throw CommandExit(code: error.code)
      }
      // The file holds the plan's first seeds (checked): the campaign goes on after the last.
      if let last = file.existing.last {
        if let next = plan.seed(after: last.seed) {
          plan.lower = next
        } else {
          (plan.lower, plan.skip) = (plan.upper, [plan.upper])  // all done
        }
      }
      output = file
    } else if args.has("--resume") {
      throw usage("--resume needs --out FILE.jsonl: the campaign to continue.", console)
    }
    // The lock is given up when the command ends, not when the last reference to the file goes.
    defer { output?.finish() }

    let campaign =
      if let app {
        FuzzCampaign(shape: shape, app: app, seeds: plan, jobs: jobs, shrink: false)
      } else {
        FuzzCampaign(shape: shape, policy: policy, seeds: plan, jobs: jobs, shrink: false)
      }
    if let file = output { try checkSameCampaign(file, campaign, console) }
    let previous = output?.existing.count ?? 0
    let context = ReportContext(policy: policy, shape: shape, app: app, intents: args.value("--intents") != nil ? shape.intents : nil)
    let mode = OutputMode(json: args.value("--format") == "json", quiet: quiet, verbose: verbose)
    let session = FuzzSession(findings: findings)
    let progress = FuzzProgress(
      console: console, total: plan.count, previous: previous, timeLimit: timeLimit,
      interval: console.stderrIsTerminal ? 1 : FuzzProgress.quietInterval)
    let clock = WallClock()
    let hooks = TestHooks(ProcessInfo.processInfo.environment)
    let (limit, cap, workload, results) = (timeLimit, maxFailures, shape, output)
    // Shrink a new signature's first seed only where the result goes: a file, or the text.
    let shrinks = minimizeTo != nil || (!mode.json && !mode.quiet)
    campaign.run(
      shouldStop: { interrupt.isSet || (limit.map { clock.elapsedSeconds >= $0 } ?? false) },
      emit: { outcome in
        // A stop request drops the seeds not yet written: only written seeds count as done.
        if interrupt.isSet { return false }
        var record = outcome.record
        if timings { record.wallMicroseconds = microseconds(outcome.wallTime) }
        let finding = session.findings.finding(for: record)
        let kindsSeen = session.findings.kindsSeen
        var shrunk: Shrinker.Result?
        var shown = MinimalScenario.inline
        if case .new(let signature, let keep?) = finding, shrinks {
          shrunk = minimalScenario(seed: record.seed, signature: signature, keep: keep, shape: workload, policy: policy, app: app)
          if let shrunk, let dir = minimizeTo {
            let path = (dir as NSString).appendingPathComponent(shrunk.file.source)
            do {
              try AtomicFile.write(shrunk.text, to: path)
              record.minimized = path
              shown = .written(path)
            } catch {
              console.err("warning: \(error)\n")  // printed in full instead
            }
          } else if !mode.verbose && session.findings.groups.count >= inlineScenarios {
            shown = .withheld
          }
        }
        if let results, !results.append(record.jsonLine) { return false }  // the disk is full: stop, resumable
        session.findings.add(record, minimized: record.minimized)
        session.written += 1
        session.lastSeed = record.seed
        if record.failed { session.failed.append(record) }
        for (i, drawn) in outcome.profile.dimensions.enumerated() where drawn { session.swarm[i] += 1 }
        if let killAfter = hooks.killAfter, session.written == killAfter { kill(getpid(), SIGKILL) }
        if !mode.json && !mode.quiet {
          switch finding {
          case .passed:
            break
          case .known(let index):
            let group = session.findings.groups[index]
            if mode.verbose { console.out(seedReport(outcome, signature: group.signature, firstSeed: group.firstSeed, context: context)) }
          case .new(let signature, _):
            if mode.verbose { console.out(seedReport(outcome, signature: signature, firstSeed: record.seed, context: context)) }
            let brief = !mode.verbose && signature.kinds.allSatisfy(kindsSeen.contains)
            let number = session.findings.groups.count
            progress.clear()
            console.out(
              signatureReport(
                outcome, signature: signature, number: number, brief: brief, compact: !mode.verbose && number > fullBlocks, shrunk: shrunk,
                scenario: shown, context: context))
          }
        }
        if let after = hooks.signalAfter, session.written == after {
          kill(getpid(), hooks.signal)
          interrupt.waitForSignal(seconds: 10)
        }
        if !mode.quiet { progress.tick(failing: session.findings.failing, signatures: session.findings.groups.count, elapsed: clock.elapsedSeconds) }
        if interrupt.isSet { return false }
        return cap.map { session.findings.failing < $0 } ?? true
      })
    let elapsed = clock.elapsedSeconds
    progress.clear()
    interrupt.stop()
    if let output, let reason = output.failure {
      throw CLIError.io(
        what: "'\(output.path)'", reason: reason,
        hint:
          "\(session.written) record\(session.written == 1 ? "" : "s") of this run were written; free space, then continue with the same command and --resume."
      )
    }
    let done = session.written
    let complete = plan.count.map { UInt64(done) >= $0 } ?? false
    let stoppedBy = complete ? nil : interrupt.received
    var continuation: (message: String, command: String)?
    if let stoppedBy {
      let next = session.lastSeed.map { $0 < plan.upper ? $0 + 1 : $0 } ?? plan.lower
      let command = continueCommand(args, nextSeed: next, lastSeed: plan.upper, timeLeft: timeLimit.map { $0 - elapsed })
      let how =
        if let output {
          "\(done) record\(done == 1 ? "" : "s") of this run written to \(output.path); continue with:"
        } else {
          "there is no --out to resume from (pass --out FILE.jsonl to make a campaign resumable); the seeds not run yet:"
        }
      continuation = ("stopped by \(InterruptWatch.name(stoppedBy)): \(how)\n  \(command)\n", command)
    }
    let rate = elapsed > 0 ? Double(done) / elapsed : 0
    if mode.json {
      let summary = CampaignSummary(
        policy: app?.policyName ?? policy.description, scenario: shape.name, seeds: done, failing: session.findings.failing,
        seedsPerSecond: Int(rate.rounded()),
        failures: session.failed, signatures: session.findings.groups.map(SignatureSummary.init),
        convergedAfter: session.findings.convergencePercentiles, notConverged: session.findings.unconverged,
        stoppedBy: stoppedBy.map(InterruptWatch.name), continueWith: continuation?.command,
        appIntents: app == nil
          ? nil
          : [
            "applied": session.findings.appIntents.applied, "refusedAsExpected": session.findings.appIntents.refusedAsExpected,
            "refused": session.findings.appIntents.refused,
          ])
      console.out(summary.jsonLine + "\n")
      if let continuation { console.err(continuation.message) }
    } else {
      var text = ""
      if !mode.quiet && session.findings.failing > 0 { text += summaryTables(session.findings) }
      if !mode.quiet, let convergence = session.findings.convergenceText { text += "\nsync quiet into settle: \(convergence)\n" }
      if mode.verbose && session.written > 0 { text += session.swarmText(seeds: session.written) + "\n" }
      if let continuation { text += continuation.message }
      let resumed = previous == 0 ? "" : " (+\(previous) from \(args.value("--out")!))"
      if app != nil {
        // What the app made of its workload: a campaign whose intents it refused tests nothing.
        let i = session.findings.appIntents
        text +=
          "the app's intents: \(BenchCommand.group(Double(i.applied))) applied · \(BenchCommand.group(Double(i.refusedAsExpected))) refused as expected (the record was not on the device) · \(BenchCommand.group(Double(i.refused))) refused"
          + (i.refused > 0 ? " — each fails its seed\n" : "\n")
      }
      text +=
        "fuzz \(app?.policyName ?? policy.description) on \(shape.name): \(done) seed\(done == 1 ? "" : "s")\(resumed), \(session.findings.failing) failing · \(BenchCommand.group(rate)) seeds/s · \(BenchCommand.format2(elapsed))s with \(jobs) job\(jobs == 1 ? "" : "s")"
      text += stoppedBy.map { " · stopped by \(InterruptWatch.name($0))\n" } ?? "\n"
      console.out(text)
    }
    if let stoppedBy { return InterruptWatch.exitCode(stoppedBy) }
    return session.findings.failing == 0 ? .success : .failure
  }

  /// `duration` in whole microseconds (a negative one as zero).
  static func microseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
  }

  /// The first seed of a new signature shrunk to a minimal scenario keeping `keep`, named for
  /// the signature and the seed (`default-lost-edit+stale-overwrite-seed-12`).
  static func minimalScenario(
    seed: UInt64, signature: FuzzSignature, keep: AnomalyKind, shape: WorkloadShape, policy: PolicySpec, app: AppUnderTest? = nil
  ) -> Shrinker.Result? {
    let (file, _) = WorkloadGenerator.generate(seed: seed, shape: shape, policy: policy)
    let found = app.map { Shrinker.shrink(file, seed: seed, app: $0, kind: keep) } ?? Shrinker.shrink(file, seed: seed, policy: policy, kind: keep)
    guard var shrunk = found else { return nil }
    shrunk.file.name = "\(shape.name)-\(signature.slug)-seed-\(seed)"
    shrunk.file.source = shrunk.file.name + ".scenario"
    return shrunk
  }
}

/// How much `fuzz` prints on stdout.
struct OutputMode: Sendable {
  /// `--format json`: one object at the end.
  var json: Bool
  /// `--quiet`: the final summary line only (and errors).
  var quiet: Bool
  /// `--verbose`: every failing seed too.
  var verbose: Bool
}

/// What the emitting closure keeps between seeds (emission is serialized by the campaign).
final class FuzzSession: @unchecked Sendable {
  var findings: FuzzFindings
  /// Records written by this run.
  var written = 0
  /// The last seed written by this run.
  var lastSeed: UInt64?
  /// This run's failing records, as `--format json` lists them.
  var failed: [FuzzRecord] = []
  /// How many of this run's seeds drew each swarm dimension (``SwarmProfile/dimensions``).
  var swarm = [Int](repeating: 0, count: SwarmProfile.dimensionNames.count)

  init(findings: FuzzFindings) { self.findings = findings }

  /// `swarm (of 40 seeds): loss 21 · … · quota 5 · throttled 6 · …` — what the seeds drew.
  func swarmText(seeds: Int) -> String {
    "swarm (of \(seeds) seed\(seeds == 1 ? "" : "s")): "
      + zip(SwarmProfile.dimensionNames, swarm).map { "\($0) \($1)" }.joined(separator: " · ")
  }
}

/// Hidden hooks for the tests of interruption: die by SIGKILL right after the N-th record is
/// written (`SIM_CLI_TEST_KILL_AFTER`), or send the process SIGINT (or `TERM`, with
/// `SIM_CLI_TEST_SIGNAL=TERM`) right after it (`SIM_CLI_TEST_SIGNAL_AFTER`): deterministic
/// points in place of timed kills.
struct TestHooks: Sendable {
  var killAfter: Int?
  var signalAfter: Int?
  var signal: Int32

  init(_ environment: [String: String]) {
    killAfter = environment["SIM_CLI_TEST_KILL_AFTER"].flatMap { Int($0) }
    signalAfter = environment["SIM_CLI_TEST_SIGNAL_AFTER"].flatMap { Int($0) }
    signal = environment["SIM_CLI_TEST_SIGNAL"] == "TERM" ? SIGTERM : SIGINT
  }
}

/// `fuzz --format json`: the campaign in one object, its failing records as `--out` writes them
/// and its signatures; after a stop by a signal, which one and the command that continues.
struct CampaignSummary: Encodable {
  var policy: String
  var scenario: String
  var seeds: Int
  var failing: Int
  var seedsPerSecond: Int
  var failures: [FuzzRecord]
  var signatures: [SignatureSummary]
  /// Percentiles of settle's time to converge over the seeds that converged.
  var convergedAfter: [String: String]?
  var notConverged: Int
  var stoppedBy: String?
  var continueWith: String?
  /// With an app: its intents over all seeds (`applied`, `refusedAsExpected`, `refused`).
  var appIntents: [String: Int]?

  var jsonLine: String {
    let e = JSONEncoder()
    e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self)
  }
}

/// One signature in `fuzz --format json`.
struct SignatureSummary: Encodable {
  var signature: String
  var kinds: [String]
  var axes: [String]
  var seeds: Int
  var firstSeed: UInt64
  var minimized: String?

  init(_ group: FuzzFindings.Group) {
    signature = group.signature.text
    kinds = group.signature.kinds.map(\.rawValue)
    axes = group.signature.axes
    seeds = group.seeds
    firstSeed = group.firstSeed
    minimized = group.minimized
  }
}
