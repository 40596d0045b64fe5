import Replica
@_spi(Kernel) import Simulator

/// A run as a picture: one swimlane per device and one for the server; offline windows, outages
/// and background windows shaded; intents as labelled marks; every message an arrow from its
/// send to its delivery (a dropped one ends in a cross, a duplicate copy is marked); kills
/// marked; each anomaly's losing intent and the write that beat it in red, linked, with the
/// oracle's explanation as a tooltip and in the legend. Long idle stretches are drawn as breaks.
///
///     let result = ScenarioRunner.run(try Scenario.load("fat-note-lww"), keepEvents: true)
///     try TimelineSVG.render(result).write(toFile: "fat-note-lww.svg", atomically: true, encoding: .utf8)
///
/// The SVG is self-contained (no scripts, no external fonts or images) and byte-for-byte the
/// same for the same run on any machine. It has no style sheet: fonts and colours are
/// presentation attributes, and a label sits on a translucent white box rather than behind a
/// white outline, so converters (rsvg-convert, ImageMagick's own renderer) draw the words as a
/// browser does. Labels are laid out so that none overlaps another.
///
/// - Important: Arrows, windows and server decisions come from the full trace: run with
///   `keepEvents: true` (or use ``render(_:seed:policy:)``). A hash-only result still shows the
///   lanes, intents and anomalies.
/// - Complexity: O(*n* log *n*) in the number of trace records.
public enum TimelineSVG {
  /// The picture of a finished run.
  public static func render(_ result: ScenarioRunner.Result) -> String {
    var drawing = TimelineDrawing(result)
    return drawing.draw()
  }

  /// Runs `file` (optionally with another seed or policy) keeping the full trace, and draws it.
  public static func render(_ file: ScenarioFile, seed: UInt64? = nil, policy: PolicySpec? = nil) -> String {
    render(ScenarioRunner.run(file, seed: seed, policy: policy, keepEvents: true))
  }
}

/// The layout and drawing of one picture. All coordinates in tenths of a pixel.
struct TimelineDrawing {
  struct Lane {
    var node: Int
    var name: String
    /// Which side of the lifeline intent labels go: -1 above, +1 below (away from the server).
    var side: Int
    var top = 0
    var line = 0
    var bottom = 0
    var farRows = 1
    var nearRows = 1
  }

  /// A label placed in a row beside a lane's lifeline.
  struct Placed {
    var x: Int
    var row: Int
    var text: String
    var width: Int
  }

  static let rowHeight = 150
  static let nearRowHeight = 130

  let history: RunHistory
  let report: RunReport
  /// Where the time axis starts: right of the widest lane name.
  let left: Int
  var lanes: [Lane] = []
  var laneOf: [Int] = []
  var axis: TimeAxis
  var width = 0
  var lanesTop = 0
  var lanesBottom = 0
  var intentLabels: [IntentID: Placed] = [:]
  var nearLabels: [Int: [(Placed, NearItem)]] = [:]
  /// Under the lanes: the length of each idle gap and the start of the settle period.
  var bottomLabels: [(Placed, NearItem)] = []
  var anomalyOf: [IntentID: [Int]] = [:]
  /// The server decision each anomaly hinges on, by the anomaly's index.
  var decisionOf: [Int: Decision] = [:]
  /// Where each server decision was drawn, by `"seq:key"`.
  var storeAt: [String: (Int, Int)] = [:]
  /// What is already drawn where a badge or a free-floating word could go.
  var taken: [Box] = []
  var out = ""

  /// Something written beside a lane or under the lanes: a window, a kill, a clock jump, a fact,
  /// a word on a reply, the note under a decisive server decision.
  struct NearItem {
    var role: TextRole
    var tooltip: String
    var fill: String? = nil
  }

  /// An anomaly's decisive server decision and the few words written under it.
  struct Decision {
    var store: RunHistory.Store
    var note: String
  }

  /// An axis-aligned rectangle in tenths of a pixel.
  struct Box {
    var x0: Int
    var y0: Int
    var x1: Int
    var y1: Int

    func intersects(_ o: Box) -> Bool { x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1 }
  }

  init(_ result: ScenarioRunner.Result) {
    history = RunHistory(result)
    report = result.report
    let names = (0..<history.deviceCount).map(history.names.node) + [history.names.node(history.serverNode)]
    let widest = names.map { SVGText.width($0, size: TextRole.lane.size, mono: false, bold: true) }.max() ?? 0
    left = max(1_200, 120 + widest + 200)
    axis = TimeAxis(times: Self.moments(history), start: left, target: 6_000)
    for (k, a) in report.anomalies.enumerated() {
      for id in a.intents {
        guard let i = history.intent(id) else { continue }
        anomalyOf[i.id, default: []].append(k + 1)
      }
      decisionOf[k] = decision(a)
    }
    layoutLanes()
  }

  /// Every moment something is drawn at.
  static func moments(_ h: RunHistory) -> [VirtualTime] {
    var times: [VirtualTime] = [.zero]
    times += h.intents.map(\.trueTime)
    for m in h.messages {
      times.append(m.sent)
      times += m.ends.map(\.time)
    }
    for w in h.windows {
      times.append(w.start)
      if w.end < .distantFuture { times.append(w.end) }
    }
    times += h.marks.map(\.time)
    if let s = h.settleEnd { times.append(s) }
    return times
  }

  // MARK: Layout

  mutating func layoutLanes() {
    let n = history.deviceCount
    let above = (n + 1) / 2
    var order: [(Int, Int)] = (0..<above).map { ($0, -1) }
    order.append((history.serverNode, 0))
    order += (above..<n).map { ($0, 1) }
    laneOf = Array(repeating: 0, count: n + 1)
    for (i, (node, side)) in order.enumerated() {
      laneOf[node] = i
      lanes.append(Lane(node: node, name: history.names.node(node), side: side))
    }
    placeIntentLabels()
    placeNearLabels()
    placeBottomLabels()
    lanesTop = 820
    var y = lanesTop
    for i in lanes.indices {
      let far = lanes[i].node == history.serverNode ? 150 : lanes[i].farRows * Self.rowHeight + 110
      let near = lanes[i].nearRows * Self.nearRowHeight + 120
      lanes[i].top = y
      lanes[i].line = y + (lanes[i].side > 0 ? near : far)
      lanes[i].bottom = lanes[i].line + (lanes[i].side > 0 ? far : near)
      y = lanes[i].bottom
    }
    lanesBottom = y
    var right = axis.end + 300
    for (t, _) in axis.ticks {
      right = max(right, axis.x(VirtualTime(nanoseconds: t)) + SVGText.width(TimeText.moment(t), size: TextRole.tick.size, mono: false) / 2 + 100)
    }
    for p in intentLabels.values { right = max(right, p.x + p.width + 200) }
    for items in nearLabels.values { for (p, _) in items { right = max(right, p.x + p.width + 200) } }
    for (p, _) in bottomLabels { right = max(right, p.x + p.width + 200) }
    width = max(right, 8_000)
  }

  /// Packs labels into rows: each goes in the lowest row where it does not touch the previous one.
  static func pack(_ items: [(x: Int, text: String)], role: TextRole) -> [Placed] {
    var rowEnds: [Int] = []
    var placed: [Placed] = []
    for item in items {
      let w = SVGText.width(item.text, size: role.size, mono: role.mono, bold: role.weight >= 600)
      var row = 0
      while row < rowEnds.count, rowEnds[row] + 80 > item.x { row += 1 }
      if row == rowEnds.count { rowEnds.append(0) }
      rowEnds[row] = item.x + w
      placed.append(Placed(x: item.x, row: row, text: item.text, width: w))
    }
    return placed
  }

  mutating func placeIntentLabels() {
    for d in 0..<history.deviceCount {
      let mine = history.intents.filter { Int($0.device) == d }.sorted { ($0.trueTime, $0.id) < ($1.trueTime, $1.id) }
      let placed = Self.pack(mine.map { (axis.x($0.trueTime) + 60, shortLabel($0)) }, role: .m)
      for (i, p) in zip(mine, placed) { intentLabels[i.id] = p }
      lanes[laneOf[d]].farRows = max(1, (placed.map(\.row).max() ?? 0) + 1)
    }
  }

  /// Words on the near side of each lane (towards the server), packed in rows so none touch:
  /// windows and marks, the word on a reply that changes what the device does next, and under
  /// the server's lifeline the note of each decisive decision (several anomalies on one
  /// decision stack, one row each).
  mutating func placeNearLabels() {
    var items: [Int: [(x: Int, text: String, item: NearItem)]] = [:]
    for w in history.windows where w.node >= 0 {
      let tip = "\(history.names.node(w.node)): \(w.label) from \(TimeText.moment(w.start.nanoseconds)) to \(TimeText.moment(w.end.nanoseconds))"
      items[w.node, default: []].append((axis.x(w.start) + 40, w.label, NearItem(role: .w, tooltip: tip)))
    }
    for m in history.marks {
      let (text, tip) = markText(m)
      items[m.node, default: []].append((axis.x(m.time) + 50, text, NearItem(role: .k, tooltip: tip)))
    }
    for m in history.messages {
      guard let note = messageNote(m) else { continue }
      let color = TimelineStyle.message(m.kind).color
      for end in m.ends where end.delivered {
        items[m.to, default: []].append((axis.x(end.time) + 40, note, NearItem(role: .k, tooltip: messageTooltip(m, end), fill: color)))
      }
    }
    for (k, a) in report.anomalies.enumerated() {
      guard let d = decisionOf[k] else { continue }
      let color = a.kind.isViolation ? TimelineStyle.red : TimelineStyle.blue
      let tip = "\(k + 1). \(a.kind.rawValue): \(a.explanation)"
      items[history.serverNode, default: []].append((axis.x(d.store.time) + 100, d.note, NearItem(role: .k, tooltip: tip, fill: color)))
    }
    for (node, list) in items {
      let sorted = list.sorted { ($0.x, $0.text, $0.item.tooltip) < ($1.x, $1.text, $1.item.tooltip) }
      let placed = Self.pack(sorted.map { ($0.x, $0.text) }, role: .k)
      nearLabels[node] = Array(zip(placed, sorted.map(\.item)))
      lanes[laneOf[node]].nearRows = max(1, (placed.map(\.row).max() ?? 0) + 1)
    }
  }

  /// Under the lanes, packed in rows: the length of each idle gap, and where settling starts.
  mutating func placeBottomLabels() {
    var items: [(x: Int, text: String, item: NearItem)] = []
    for b in axis.breaks {
      let text = TimeText.gap(b.t1 - b.t0)
      let x = (b.x0 + b.x1) / 2 - SVGText.width(text, size: TextRole.tick.size, mono: false) / 2
      items.append((x, text, NearItem(role: .tick, tooltip: "\(text) with nothing happening, left out")))
    }
    for w in history.windows where w.kind == .settle {
      let tip = "settle from \(TimeText.moment(w.start.nanoseconds)): every fault healed, every device online, syncing until quiescent"
      items.append((axis.x(w.start) + 30, "settle", NearItem(role: .w, tooltip: tip, fill: TimelineStyle.green)))
    }
    let sorted = items.sorted { ($0.x, $0.text) < ($1.x, $1.text) }
    bottomLabels = Array(zip(Self.pack(sorted.map { ($0.x, $0.text) }, role: .k), sorted.map(\.item)))
  }

  /// The server decision an anomaly hinges on: the save that replaced the lost value, or the
  /// save that brought a deleted record back.
  func decision(_ a: Anomaly) -> Decision? {
    if let (loser, _) = a.pair(in: history) {
      guard let f = a.field?.name, let key = a.record?.key, let fi = a.field?.index,
        let s = history.decisiveStore(key: key, field: fi, loser: loser.id)
      else { return nil }
      let kept = s.stored.flatMap { fi < $0.fields.count ? Vocabulary.writer($0.fields[fi].writer) : nil } ?? "?"
      return Decision(store: s, note: "\(f)←\(kept), not i\(loser.id)")
    }
    guard a.kind == .resurrection, let first = a.intents.first.flatMap({ history.intent($0) }), first.kind == .delete,
      let s = history.revivingStore(key: first.record)
    else { return nil }
    return Decision(store: s, note: "\(history.names.record(first.record)) saved again")
  }

  func markText(_ m: RunHistory.Mark) -> (String, String) {
    let at = TimeText.moment(m.time.nanoseconds)
    let who = history.names.node(m.node)
    switch m.kind {
    case .kill:
      return ("killed", "\(who): app killed at \(at) (memory lost, local store kept)")
    case .clockJump(let by):
      return ("clock \(by.nanoseconds >= 0 ? "+" : "")\(by)", "\(who): clock jumped by \(by) at \(at)")
    case .purged(let key, let deletedAt):
      let r = history.names.record(key)
      return (
        "\(r) tombstone purged",
        "server: the deletion of \(r) (at \(TimeText.moment(deletedAt.nanoseconds))) was forgotten after the retention window, when the next request arrived at \(at); older change tokens now expire"
      )
    case .condition(let label, let text), .share(let label, let text):
      return (label, "\(who): \(text) at \(at)")
    case .fact(let fact):
      switch fact {
      case .outboxLost(let keys):
        return (
          "outbox lost (\(keys.count))",
          "\(who): pending uploads of \(keys.map(history.names.record).joined(separator: ", ")) lost with the in-memory outbox at \(at)"
        )
      case .batchAbandoned(let keys, let cause):
        return (
          "batch abandoned (\(keys.count))",
          "\(who): a batch of \(keys.map(history.names.record).joined(separator: ", ")) was cleared when sent and then cut off at \(at) (\(cause))"
        )
      case .rejected(let key, let type):
        return ("\(history.names.record(key)) rejected", "\(who): the server rejected \(history.names.record(key)) (type \(type)) at \(at)")
      case .reappeared(let key, _):
        return ("\(history.names.record(key)) reappeared", "\(who): \(history.names.record(key)), seen deleted, became visible again at \(at)")
      case .fetchDropped(let count, let cause):
        return (
          "fetched \(count) dropped", "\(who): \(count) fetched record\(count == 1 ? "" : "s") dropped before they were applied at \(at) (\(cause))"
        )
      case .gaveUp(let keys, let error, let told):
        return (
          "gave up (\(keys.count))",
          "\(who): gave up uploading \(keys.map(history.names.record).joined(separator: ", ")) after \(error) at \(at)"
            + (told ? ", and told the user" : "; the app still shows them synced")
        )
      case .setAside(let keys, let account):
        return (
          "set aside (\(keys.count))",
          "\(who): settle ended with unsent changes to \(keys.map(history.names.record).joined(separator: ", ")) set aside with account \(history.names.account(account))"
        )
      case .orphanDropped(let key, let parent):
        return (
          "\(history.names.record(key)) dropped",
          "\(who): dropped the fetched version of \(history.names.record(key)) at \(at): it refers to \(history.names.record(parent)), which is not on the device (orphans=drop)"
        )
      case .erasedUnknownFields(let key, let fields, let version):
        return (
          "\(history.names.record(key)) fields erased",
          "\(who): app version \(version) saved all of \(history.names.record(key)) without \(fields.map { history.names.field(key, Int($0)) }.joined(separator: ", ")), which it does not know, at \(at) (unknown-fields=drop)"
        )
      case .droppedUnknownFields(let key, let fields, let version):
        return (
          "\(history.names.record(key)) fields dropped",
          "\(who): app version \(version) discarded "
            + (fields.isEmpty
              ? "\(history.names.record(key)), of a type it does not know,"
              : "fetched \(fields.map { history.names.field(key, Int($0)) }.joined(separator: ", ")) of \(history.names.record(key))")
            + " at \(at) (unknown-fields=drop)"
        )
      case .wipedOnAccountChange(let keys):
        return (
          "wiped (\(keys.count))",
          "\(who): deleted its local data on an account change at \(at), with unsent changes to \(keys.map(history.names.record).joined(separator: ", "))"
        )
      case .zoneGone(let reason, let wiped, let reuploaded):
        return (
          "zone \(reason)",
          "\(who): learned at \(at) that the zone was deleted (\(reason))"
            + (wiped.isEmpty ? "" : "; deleted its copies of \(wiped.map(history.names.record).joined(separator: ", "))")
            + (reuploaded.isEmpty ? "" : "; queued \(reuploaded.map(history.names.record).joined(separator: ", ")) to upload again")
        )
      case .stalled(let keys, let error):
        return (
          "stalled (\(keys.count))",
          "\(who): settle gave up with \(keys.map(history.names.record).joined(separator: ", ")) still unsent"
            + (error.map { ", waiting on \($0)" } ?? "")
        )
      case .permissionRefused(let keys, let reverted):
        return (
          "refused (\(keys.count))",
          "\(who): the server refused \(keys.map(history.names.record).joined(separator: ", ")) with permissionFailure at \(at)"
            + (reverted
              ? "; took the server's records back and told the user"
              : "; the app still shows the edits saved" + (report.app == nil ? " (permission-failure=ignore)" : ""))
        )
      case .accessEnded(let removed, let kept):
        return (
          "access ended (\(removed.count + kept.count))",
          "\(who): its account lost access to shared records at \(at)"
            + (removed.isEmpty ? "" : "; removed \(removed.map(history.names.record).joined(separator: ", "))")
            + (kept.isEmpty
              ? "" : "; kept showing \(kept.map(history.names.record).joined(separator: ", "))" + (report.app == nil ? " (access-ended=keep)" : ""))
        )
      case .appDropped(let keys, let cause):
        return (
          "unsent change dropped (\(keys.count))",
          "\(who): \(keys.map(history.names.record).joined(separator: ", ")) no longer pending, never sent: " + Oracle.appDropCause(cause, at: m.time)
        )
      }
    }
  }

  /// `i2 n1.body += " (margin…"`: short enough to sit beside its mark.
  func shortLabel(_ i: Intent) -> String {
    let names = history.names
    let r = names.record(i.record)
    var text: String
    switch i.kind {
    case .create(_, let values):
      text =
        "create \(r)"
        + (values.isEmpty ? "" : " " + values.map { "\(names.field(i.record, Int($0.field)))=\(short($0.value))" }.joined(separator: " "))
    case .set(let values):
      text = values.map { "\(r).\(names.field(i.record, Int($0.field))) = \(short($0.value))" }.joined(separator: ", ")
    case .append(let f, let s):
      text = "\(r).\(names.field(i.record, Int(f))) += \(Self.quote(s, 18))"
    case .replace(let f, let old, let new, _):
      text = "\(r).\(names.field(i.record, Int(f))) \(Self.quote(old, 10))→\(Self.quote(new, 10))"
    case .delete:
      text = "delete \(r)"
    }
    if text.count > 44 { text = String(text.prefix(43)) + "…" }
    return "i\(i.id) " + text + (i.ignored == nil ? "" : " (ignored)")
  }

  func short(_ v: Value) -> String {
    switch v {
    case .string(let s): Self.quote(s, 14)
    case .text(let t): Self.quote(t.string, 14)
    default: history.names.render(v)
    }
  }

  static func quote(_ s: String, _ limit: Int) -> String {
    let flat = s.replacingNewlines()
    return "\"" + (flat.count > limit ? String(flat.prefix(limit - 1)) + "…" : flat) + "\""
  }
}

extension String {
  func replacingNewlines() -> String {
    var out = ""
    for ch in self { out += ch == "\n" ? "⏎" : String(ch) }
    return out
  }
}
