import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// `sim-cli report FILE.jsonl…`: one summary of the records `fuzz --out` wrote — a campaign, or
/// its shard files in any order — as text (or JSON) on stdout, and with `--html` as a page.
enum ReportCommand {
  static let spec = CommandSpec(
    name: "report", summary: "Summarize fuzz results (fuzz --out files, shards in any order) as text or an HTML page.",
    discussion: """
      Reads the JSON Lines that fuzz --out writes — one campaign's file, its shard files in any
      order or concatenated, '-' for standard input — and prints one summary per campaign
      (policy and workload): the seeds covered and missing, the failing share, the time to
      converge, anomalies by kind, and each signature with its seeds, the policy axes behind it,
      its minimal scenario when fuzz --minimize-to saved one near the inputs, and the command
      that runs it again. The same records give the same text whatever the order of the files
      or the sharding: a seed's copies with the same outcome count once, and copies that differ
      are an error. --html also writes a self-contained page: plots of failing seeds per
      signature, kinds over seed ranges, time to converge and seeds/s (from fuzz --timings), and
      each signature's minimal scenario with its timeline (the first seed is shrunk when no file
      was saved, unless --no-shrink). Exit 1 when a seed failed, 0 when none did, 65 when a line
      is not a fuzz record (a last line cut short is left out, with a note).
      """,
    positionals: [.init(name: "FILE.jsonl", help: "Results files of fuzz --out ('-': standard input).", variadic: true)],
    options: [
      .value("--html", "OUT.html", "Also write the report as one self-contained HTML page."),
      .flag("--no-shrink", "With --html: do not shrink a signature whose minimal scenario was not saved."),
      .value("--jobs", "N", "Signatures shrunk in parallel for --html; the core count by default."),
      .value("--intents", "N", "The --intents the campaign ran with (records do not say it): for --html's shrinking and the again commands."),
      Formats.option,
    ],
    examples: [
      "sim-cli report results.jsonl",
      "sim-cli report shard-*.jsonl --html report.html",
      "cat shard-*.jsonl | sim-cli report - --format json",
    ])

  static let command = Command(spec: spec) { args, console in try run(args, console) }

  static func usage(_ message: String, _ console: Console) -> CommandExit {
    console.err(UsageError.other(message).render(command: spec))
    return CommandExit(code: .usage)
  }

  static func run(_ args: ParsedArguments, _ console: Console) throws -> ExitCode {
    let inputs = args.positionals
    if inputs.filter({ $0 == "-" }).count > 1 { throw usage("'-' (standard input) can be read only once.", console) }
    let jobs = try IntegerOption.jobs(args, spec: spec, console: console)
    let intents =
      args.value("--intents") == nil
      ? nil : Int(try IntegerOption.require(args, "--intents", default: 50, in: 1...100_000, spec: spec, console: console))
    if args.has("--no-shrink") && args.value("--html") == nil { throw usage("--no-shrink applies to --html, which is not given.", console) }
    try ScenarioOptions.checkOutputs(args, ["--html"], spec: spec, console: console)

    // Open every input before reading any: a typo costs nothing.
    var descriptors: [Int32] = []
    defer { for fd in descriptors where fd != STDIN_FILENO { close(fd) } }
    for input in inputs {
      descriptors.append(try open(input, console))
    }

    var reader = ResultsReader()
    var store = RecordStore(files: inputs.map { $0 == "-" ? "<stdin>" : $0 })
    var counts: [(name: String, records: Int)] = []
    for (index, fd) in descriptors.enumerated() {
      let name = store.files[index]
      let n = reader.read(fd: fd, name: name) { record, line in store.add(record, file: index, line: line) }
      counts.append((name, n))
    }
    let errors = reader.diagnostics.filter { $0.severity == .error }
    for note in reader.diagnostics where note.severity == .note { console.err(note.rendered) }
    if !errors.isEmpty {
      for error in errors.prefix(10) { console.err(error.rendered) }
      if errors.count > 10 { console.err("… and \(errors.count - 10) more\n") }
      let what = errors.count == 1 ? "is not a fuzz record" : "are not fuzz records"
      console.err(
        "Error: \(ReportText.plural(errors.count, "line")) of the input\(inputs.count == 1 ? "" : "s") \(what); nothing is reported. report reads the JSON Lines that 'fuzz --out FILE.jsonl' writes.\n"
      )
      return .dataError
    }
    let (conflicts, conflictCount) = store.finish()
    if !conflicts.isEmpty {
      for error in conflicts { console.err(error.rendered) }
      if conflictCount > conflicts.count { console.err("… and \(conflictCount - conflicts.count) more\n") }
      console.err(
        "Error: \(ReportText.plural(conflictCount, "seed")) \(conflictCount == 1 ? "has" : "have") two records that disagree. A seed's record is the same in every run of one campaign; records differ when campaigns differ in --intents, in the scenario's content or in the version of sim-cli (each record names only the policy and the workload). Report each campaign's files on their own.\n"
      )
      return .dataError
    }
    for (name, n) in counts where n == 0 && counts.contains(where: { $0.records > 0 }) {
      console.err("\(name): note: no fuzz records in it\n")
    }
    guard counts.contains(where: { $0.records > 0 }) else {
      let names = counts.map { "'\($0.name)'" }.joined(separator: ", ")
      console.err("Error: no fuzz records in \(names); report reads the JSON Lines that 'fuzz --out FILE.jsonl' writes.\n")
      return .dataError
    }
    if store.duplicates > 0 {
      console.err(
        "note: \(ReportText.plural(store.duplicates, "record")) repeat\(store.duplicates == 1 ? "s" : "") a seed with the same outcome (a file given twice, a shard run twice, a resumed campaign's copy?): each seed counted once\n"
      )
    }

    let order = store.keys.indices.sorted { store.keys[$0] < store.keys[$1] }
    let campaigns = order.map { index in
      var campaign = ReportCampaign(store: store, campaign: index)
      campaign.intents = intents
      return campaign
    }
    let lookup = MinimalScenarioLookup(inputs: inputs)
    let minimal = campaigns.map { campaign in campaign.findings.groups.indices.map { lookup.find(campaign, signature: $0) } }
    if args.value("--format") == "json" {
      console.out(ReportJSON(campaigns: campaigns, minimal: minimal, duplicates: store.duplicates).jsonLine + "\n")
    } else {
      console.out(ReportText.render(campaigns, inputs: counts, minimal: minimal))
    }

    if let path = args.value("--html") {
      let pictures = MinimalPicture.make(campaigns, minimal: minimal, shrink: !args.has("--no-shrink"), jobs: jobs, console: console)
      let page = ReportHTML.render(campaigns, inputs: counts, pictures: pictures)
      do throws(AtomicFile.WriteError) {
        try AtomicFile.write(page, to: path)
      } catch {
        throw CLIError.io(what: "'\(error.path)'", reason: error.reason, hint: nil)
      }
      console.err("wrote report \(path)\n")
    }
    return campaigns.contains { $0.failing > 0 } ? .failure : .success
  }

  /// Opens an input for reading ('-' is standard input); a usage error says why it cannot be.
  static func open(_ input: String, _ console: Console) throws -> Int32 {
    if input == "-" { return STDIN_FILENO }
    // A named pipe is opened without waiting for a writer (with none it reads as empty).
    let fd = Foundation.open(input, O_RDONLY | O_NONBLOCK)
    guard fd >= 0 else {
      let reason = errno
      if reason == ENOENT {
        let folder = (input as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.isEmpty ? "." : folder)) ?? []
        let near = Suggestion.closest(to: (input as NSString).lastPathComponent, in: names.sorted()).map {
          " Did you mean '\(folder.isEmpty ? $0 : folder + "/" + $0)'?"
        }
        throw usage("no file '\(input)'.\(near ?? "")", console)
      }
      throw usage("cannot read '\(input)': \(String(cString: strerror(reason))).", console)
    }
    var info = stat()
    if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
      close(fd)
      throw usage("'\(input)' is a folder; give the results files in it ('\(input)/*.jsonl').", console)
    }
    let flags = fcntl(fd, F_GETFL)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    return fd
  }
}
