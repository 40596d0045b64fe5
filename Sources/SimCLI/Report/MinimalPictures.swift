import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Each signature's minimal scenario for the HTML report, with its timeline picture: the file
/// `fuzz --minimize-to` saved when there is one near the inputs, else the signature's first seed
/// shrunk again here exactly as `fuzz` shrinks it (the same kept kind, the same file) — after
/// checking that the seed replays with the trace hash its record has, since the records do not
/// say `--intents` or the version that wrote them. When neither can be had, the reason.
struct MinimalPicture: Sendable {
  /// Where the scenario comes from, in words: `saved as PATH`, `shrunk from seed 3 (…)`.
  var source: String
  /// The scenario's text, when there is one.
  var text: String?
  /// The timeline of its run, as SVG with ids of its own.
  var svg: String?
  /// What its own run reports, in a sentence.
  var finding: String?

  /// Minimal scenarios of every signature of `campaigns` (`minimal` as found next to the inputs),
  /// made on `jobs` threads; the result is the same for any number.
  static func make(
    _ campaigns: [ReportCampaign], minimal: [[MinimalScenarioLookup.Found]], shrink: Bool, jobs: Int, console: Console
  ) -> [[MinimalPicture]] {
    let tasks: [(campaign: Int, signature: Int)] = campaigns.enumerated().flatMap { c, campaign in
      campaign.findings.groups.indices.map { (c, $0) }
    }
    let toShrink = tasks.filter { t in
      if case .file = minimal[t.campaign][t.signature] { return false }
      return shrink && campaigns[t.campaign].findings.groups[t.signature].kept != nil
    }.count
    if toShrink > 0 {
      console.err("report: shrinking the first seed of \(ReportText.plural(toShrink, "signature")) (no minimal scenario saved)…\n")
    }
    let results = Results(count: tasks.count)
    // Task-local values are not inherited by the threads: the tool's name (for the commands it
    // suggests) and its apps are handed on.
    let (tool, apps) = (ToolName.current, SimCLI.apps)
    let next = Results.Counter()
    DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, tasks.count))) { _ in
      ToolName.$current.withValue(tool) {
        SimCLI.$apps.withValue(apps) {
          while let index = next.take(below: tasks.count) {
            let (c, s) = tasks[index]
            results.set(index, picture(campaigns[c], signature: s, found: minimal[c][s], shrink: shrink, id: "c\(c + 1)s\(s + 1)"))
          }
        }
      }
    }
    var out = campaigns.map { [MinimalPicture](repeating: MinimalPicture(source: ""), count: $0.findings.groups.count) }
    for (index, task) in tasks.enumerated() { out[task.campaign][task.signature] = results.get(index) }
    return out
  }

  /// One signature's picture; `id` makes the SVG's ids unique in the page.
  static func picture(_ campaign: ReportCampaign, signature index: Int, found: MinimalScenarioLookup.Found, shrink: Bool, id: String)
    -> MinimalPicture
  {
    let group = campaign.findings.groups[index]
    let app = campaign.appName.flatMap { name in SimCLI.apps.first { $0.name == name } }
    if campaign.appName != nil && app == nil {
      if case .file(let path, _, _) = found {
        return MinimalPicture(
          source: "saved as \(path)", text: text(of: path), svg: nil,
          finding: "not run: this tool was not built with \(campaign.key.policy.dropFirst(4))")
      }
      return MinimalPicture(source: "not saved, and not shrunk: this tool was not built with \(campaign.key.policy.dropFirst(4))")
    }
    switch found {
    case .file(let path, let scenario, _):
      var picture = MinimalPicture(source: "saved as \(path)", text: text(of: path))
      draw(scenario, app: app, id: id, into: &picture)
      return picture
    case .missing, .none:
      var why = ""
      if case .missing(let path, let seed) = found { why = "seed \(seed)'s record names \(path), which is not there; " }
      guard let keep = group.kept else { return MinimalPicture(source: why + "none: the seed itself replays what the app refused") }
      guard shrink else { return MinimalPicture(source: why + "not saved (--no-shrink)") }
      let shape: WorkloadShape
      switch workload(campaign, app: app) {
      case .success(let s): shape = s
      case .failure(let reason): return MinimalPicture(source: why + "not shrunk: \(reason.message)")
      }
      let policy = campaign.spec ?? AppUnderTest.judgedAs
      let seed = group.firstSeed
      let replay = app.map { Fuzzer.run(seed: seed, shape: shape, app: $0) } ?? Fuzzer.run(seed: seed, shape: shape, policy: policy)
      let expected = campaign.groupSeeds[index].firstTraceHash
      guard replay.record.traceHash == expected else {
        return MinimalPicture(
          source: why
            + "not shrunk: seed \(seed) runs here with trace hash \(replay.record.traceHash), and its record has \(expected): the campaign ran with other --intents (say them with report --intents N), or another version of sim-cli or of its scenario"
        )
      }
      guard let shrunk = FuzzCommand.minimalScenario(seed: seed, signature: group.signature, keep: keep, shape: shape, policy: policy, app: app)
      else {
        return MinimalPicture(source: why + "the shrinker could not reproduce the failure of seed \(seed)")
      }
      var picture = MinimalPicture(
        source: why + "shrunk here from seed \(seed) (not saved: fuzz --minimize-to DIR saves it as \(shrunk.file.source))", text: shrunk.text)
      draw(shrunk.file, app: app, id: id, into: &picture)
      return picture
    }
  }

  /// A reason a workload cannot be made again.
  struct Reason: Error { var message: String }

  /// The workload of `campaign`, as its records name it.
  static func workload(_ campaign: ReportCampaign, app: AppUnderTest?) -> Result<WorkloadShape, Reason> {
    var shape = WorkloadShape()
    switch campaign.key.scenario {
    case "default": break
    case "sharing": shape.sharing = true
    case "assets": shape.schema = WorkloadShape.albumSchema
    default:
      guard let base = try? ScenarioLocator.load(campaign.key.scenario), !base.schema.types.isEmpty else {
        return .failure(
          Reason(message: "the workload's scenario '\(campaign.key.scenario)' is not one this tool finds (run report where the campaign ran)"))
      }
      shape.base = base
    }
    if campaign.spec == nil && app == nil {
      return .failure(Reason(message: "'\(campaign.key.policy)' is not a preset spec (a policy of one's own)"))
    }
    if let app { shape = shape.forApp(app) }
    if let intents = campaign.intents { shape.intents = intents }
    return .success(shape)
  }

  /// Runs `scenario` keeping its trace, and draws it.
  static func draw(_ scenario: ScenarioFile, app: AppUnderTest?, id: String, into picture: inout MinimalPicture) {
    let result = app.map { ScenarioRunner.run(scenario, app: $0, keepEvents: true) } ?? ScenarioRunner.run(scenario, keepEvents: true)
    picture.svg = uniqueIDs(TimelineSVG.render(result), prefix: id)
    let violations = result.report.violations
    picture.finding =
      violations.isEmpty
      ? "its run here reports no violation"
      : violations.prefix(3).map { "\($0.kind.rawValue) \($0.place): \($0.explanation)" }.joined(separator: "\n")
  }

  /// The SVG with its ids (`id="h1"`, `url(#h1)`) prefixed, so that several pictures in one page
  /// keep their own.
  static func uniqueIDs(_ svg: String, prefix: String) -> String {
    svg.replacingOccurrences(of: " id=\"", with: " id=\"\(prefix)-").replacingOccurrences(of: "\"url(#", with: "\"url(#\(prefix)-")
  }

  /// A saved file's text (what the page shows of it), at most 400 lines.
  static func text(of path: String) -> String? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.count > 400 else { return lines.joined(separator: "\n") }
    return lines.prefix(400).joined(separator: "\n") + "\n… \(lines.count - 400) more lines"
  }

  /// Results filled in by several threads, each index once.
  final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [MinimalPicture?]
    init(count: Int) { values = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ value: MinimalPicture) { lock.withLock { values[index] = value } }
    func get(_ index: Int) -> MinimalPicture { lock.withLock { values[index] ?? MinimalPicture(source: "") } }

    /// Hands out 0, 1, 2… to whichever thread asks.
    final class Counter: @unchecked Sendable {
      private let lock = NSLock()
      private var next = 0
      func take(below limit: Int) -> Int? {
        lock.withLock {
          guard next < limit else { return nil }
          defer { next += 1 }
          return next
        }
      }
    }
  }
}
