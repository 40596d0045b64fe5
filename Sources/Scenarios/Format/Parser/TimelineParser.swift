import Replica
@_spi(Kernel) import Simulator

/// The timeline, the records it creates and the expectations, checked against the
/// declarations.
struct TimelineParser: ScenarioParsePart {
  let session: ScenarioParse
  /// What the header and schema declared.
  let declared: DeclarationParser

  /// Record id → its type and the line of its `create`.
  var creates: [String: (type: String, line: Int)] = [:]
  /// Created ids in file order (for suggestions).
  var createdIDs: [String] = []
  /// The lines that create an id a line before them created too (re-creates, or mistakes).
  var recreateLines: [Int] = []
  /// Parsed timeline entries with their file order.
  var entries: [(entry: TimelineEntry, order: Int, timeOffset: Int, lineIndex: Int)] = []
  /// Every settle in file order: line index, whether it stands alone, and its time when it is
  /// `at T settle` with a valid time.
  var settles: [(lineIndex: Int, standalone: Bool, time: SimDuration?)] = []
  var expectations: [Expectation] = []
  /// The shares `share` lines make, and every share name a sharing statement uses (checked
  /// against them once the timeline is read).
  var shareDeclarations: [String] = []
  /// Per share, what its first `share` line shares (`'ID'` for a hierarchy, `zone 'Z'` for a
  /// named zone; nil: the app's zone) and that line's number.
  var shareRootLines: [String: (root: String?, line: Int)] = [:]
  /// The zones `create … in ZONE` lines make, each record's zone, and the zones `share … in`
  /// lines name.
  var zoneDeclarations: [String] = []
  var recordZones: [String: String] = [:]
  var zoneUses: [(lineIndex: Int, token: ScenarioToken)] = []
  var shareUses: [(lineIndex: Int, token: ScenarioToken)] = []

  init(session: ScenarioParse, declared: DeclarationParser) {
    self.session = session
    self.declared = declared
  }

  var devices: [String] { declared.devices }
  var knownDevices: Set<String> { declared.knownDevices }
  var types: [RecordType] { declared.types }
  var typeLines: [String: Int] { declared.typeLines }
  var brokenFields: [String: [String]] { declared.brokenFields }
  var typeListHint: String { declared.typeListHint }
  func unknownDeviceMessage(_ name: String) -> String { declared.unknownDeviceMessage(name) }

  mutating func run() {
    collectCreates()
    timelinePass()
    checkSettles()
    checkAppVersions()
    checkRecreates()
    checkShares()
  }

  /// In time order: an id is created again only after a delete of it (a re-create: the record
  /// lives again under its old name, as an app that derives names from content or reuses them
  /// does), and as the same type. (Two devices may each delete it and make it again: whether a
  /// device can, having seen it deleted, is the run's to say.)
  mutating func checkRecreates() {
    guard !recreateLines.isEmpty else { return }
    let ordered = entries.sorted { ($0.entry.time, $0.order) < ($1.entry.time, $1.order) }
    var first: [String: (type: String, lineIndex: Int)] = [:]
    var deleted: Set<String> = []
    for e in ordered {
      switch e.entry.action {
      case .create(_, let type, let id, _):
        guard let prior = first[id] else {
          first[id] = (type, e.lineIndex)
          continue
        }
        if !deleted.contains(id) {
          // Said on the later of the two lines in the file.
          let (at, other) = prior.lineIndex < e.lineIndex ? (e.lineIndex, prior.lineIndex) : (prior.lineIndex, e.lineIndex)
          let tokens = lines[at].tokens
          error(
            at, tokens.count > 5 ? tokens[5].start : 0,
            "record '\(id)' is already created on line \(lines[other].number) and not deleted in between; an id is created again only after a delete of it"
          )
        } else if prior.type != type {
          let tokens = lines[e.lineIndex].tokens
          error(
            e.lineIndex, tokens.count > 4 ? tokens[4].start : 0,
            "record '\(id)' is re-created as \(type); it was a \(prior.type) (line \(lines[prior.lineIndex].number))")
        }
      case .delete(_, let id):
        if first[id] != nil { deleted.insert(id) }
      default:
        break
      }
    }
  }

  /// In time order: an upgrade goes to a newer version than the device runs, up to the
  /// schema's latest; an intent writes only fields and creates only types its device's app
  /// version knows.
  mutating func checkAppVersions() {
    let schema = Schema(types: types)
    let latest = schema.latestVersion
    let hasVersions = latest > 1 || !declared.appVersions.isEmpty
    guard hasVersions || entries.contains(where: { if case .upgrade = $0.entry.action { return true } else { return false } }) else { return }
    var version: [String: Int] = [:]
    for d in devices { version[d] = declared.appVersions.first { $0.devices.contains(d) }?.version ?? latest }
    let ordered = entries.sorted { ($0.entry.time, $0.order) < ($1.entry.time, $1.order) }
    func known(_ typeName: String, _ field: String?, on device: String, _ i: Int) {
      guard let v = version[device], let t = schema.typeIndex(named: typeName) else { return }
      let type = schema.types[t]
      if type.since > v {
        error(
          i, 0,
          "\(device) runs app version \(v) here, which does not know \(typeName) (since \(type.since)); upgrade it first ('\(device) upgrade \(type.since)')"
        )
      } else if let field, let f = type.fieldIndex(named: field), type.fields[f].since > v {
        let since = type.fields[f].since
        error(
          i, 0,
          "\(device) runs app version \(v) here, which does not know \(typeName).\(field) (since \(since)); upgrade it first ('\(device) upgrade \(since)')"
        )
      }
    }
    for e in ordered {
      switch e.entry.action {
      case .upgrade(let d, let n):
        if n > latest {
          error(e.lineIndex, 0, "app version \(n) is newer than the schema, whose latest version is \(latest) (the largest 'since')")
        } else if let v = version[d], n <= v {
          error(e.lineIndex, 0, "\(d) already runs app version \(v) here; an upgrade goes to a newer version")
        } else {
          version[d] = n
        }
      case .create(let d, let type, _, let fields):
        known(type, nil, on: d, e.lineIndex)
        for a in fields { known(type, a.field, on: d, e.lineIndex) }
      case .set(let d, let id, let fields):
        if let type = creates[id]?.type { for a in fields { known(type, a.field, on: d, e.lineIndex) } }
      case .append(let d, let id, let field, _), .replace(let d, let id, let field, _, _):
        if let type = creates[id]?.type { known(type, field, on: d, e.lineIndex) }
      default:
        break
      }
    }
  }

  /// Every `at T DEVICE create TYPE ID` line, so that records can be used before their
  /// creation line in the file.
  mutating func collectCreates() {
    for i in lines.indices {
      let line = lines[i]
      let t = line.tokens
      guard !line.indented, !line.lexFailed, t.count >= 6, t[0].is("at"), t[3].is("create"), t[5].isWord,
        Self.isIdentifier(t[5].text)
      else { continue }
      let id = t[5].text
      if creates[id] != nil {
        // A second create of an id is a re-create, checked in time order once the timeline is
        // parsed (``checkRecreates()``).
        recreateLines.append(i)
      } else {
        creates[id] = (t[4].text, line.number)
        createdIDs.append(id)
      }
    }
  }

  /// `at` lines, `expect` lines, standalone `settle`, and anything unknown.
  mutating func timelinePass() {
    for i in lines.indices {
      let line = lines[i]
      guard !line.indented, !line.lexFailed, let head = line.tokens.first else { continue }
      guard head.isWord else {
        error(i, head.start, "expected a statement, found a string; statements start with a keyword such as 'at' or 'expect'")
        continue
      }
      switch head.text {
      case "at": parseAt(i)
      case "expect": parseExpect(i)
      case "settle": parseStandaloneSettle(i)
      case "type": continue
      case _ where Self.headerKeywords.contains(head.text): continue
      default: reportUnknownStatement(i, head)
      }
    }
  }

  /// At most one settle; nothing after it.
  mutating func checkSettles() {
    guard let first = settles.first else { return }
    for extra in settles.dropFirst() {
      error(
        extra.lineIndex, lines[extra.lineIndex].tokens.first { $0.is("settle") }?.start ?? 0,
        "a second 'settle': a file has at most one (the first is on line \(lines[first.lineIndex].number))")
    }
    let settleLine = lines[first.lineIndex].number
    if !first.standalone {
      // `at T settle` with a bad time has been reported; nothing to compare with.
      guard let settleTime = first.time else { return }
      for e in entries where e.entry.time > settleTime && e.entry.action != .settle {
        error(
          e.lineIndex, e.timeOffset,
          "this line is at \(e.entry.time), after 'settle' at \(settleTime) (line \(settleLine)); settle ends the timeline")
      }
    } else {
      for e in entries where lines[e.lineIndex].number > settleLine {
        error(
          e.lineIndex, 0,
          "'at' line after 'settle' (line \(settleLine)); the timeline comes before a standalone settle")
      }
    }
  }

}
