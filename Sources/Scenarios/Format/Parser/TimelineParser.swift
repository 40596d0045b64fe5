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
  /// Parsed timeline entries with their file order.
  var entries: [(entry: TimelineEntry, order: Int, timeOffset: Int, lineIndex: Int)] = []
  /// Every settle in file order: line index, whether it stands alone, and its time when it is
  /// `at T settle` with a valid time.
  var settles: [(lineIndex: Int, standalone: Bool, time: SimDuration?)] = []
  var expectations: [Expectation] = []

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
      if let prior = creates[id] {
        error(i, t[5].start, "record '\(id)' is already created on line \(prior.line); each id is created once")
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
