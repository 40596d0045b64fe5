import Foundation
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Which intent wrote which value, made which record and deleted it, for every device of a run:
/// a user's app stores values, not their provenance, so the drivers find it from the values
/// (which workloads for user apps make unique per intent).
package final class ProvenanceRegistry: @unchecked Sendable {
  /// Per record, every value an intent wrote to a field.
  @exclusivity(unchecked) private(set) var written: [RecordKey: [(field: Int32, value: Value, intent: IntentID)]] = [:]
  /// The intent that created each record.
  @exclusivity(unchecked) private(set) var creators: [RecordKey: IntentID] = [:]
  /// The device that created each record: the server keeps it with the record whoever saves it
  /// later (after a fetch from no token, a device hears of the deletions of its own records only).
  @exclusivity(unchecked) private(set) var creatorDevices: [RecordKey: Int32] = [:]
  /// The intent that deleted each record (its latest delete).
  @exclusivity(unchecked) var deleters: [RecordKey: IntentID] = [:]
  /// Records created again after a delete (see ``incarnations``).
  @exclusivity(unchecked) private(set) var recreated: Set<RecordKey> = []
  /// Per intent of a user's app, the create of the incarnation of its record it was made on
  /// (creates are their own): a record created again after a delete has copies of two
  /// incarnations, told apart by the values they hold.
  @exclusivity(unchecked) private(set) var incarnations: [IntentID: IntentID] = [:]
  /// The device of each create (``RecordState/creatorDevice`` of its incarnation).
  @exclusivity(unchecked) private(set) var incarnationDevices: [IntentID: Int32] = [:]
  /// The fields an app saved that the schema does not have (its own bookkeeping, such as field
  /// versions), per record and the schema's field values they were saved with: the simulated
  /// server keeps every field an app writes, the oracle judges the schema's. (Keyed by content,
  /// not change tag, so that a save whose answer was lost keeps them too; values are unique per
  /// intent, so the content names the writes it holds.)
  @exclusivity(unchecked) var extras: [RecordKey: [[Value]: [String: SyncValue]]] = [:]
  /// Which of those extra fields the app wrote among the record's `encryptedValues` (CloudKit
  /// hands them back encrypted, under `encryptedValues`).
  @exclusivity(unchecked) var encryptedExtras: [RecordKey: [[Value]: Set<String>]] = [:]
  /// Per record and text field, the pieces of text intents wrote (a create's or set's whole
  /// text, an append's text), each unique in the run.
  @exclusivity(unchecked) private(set) var pieces: [RecordKey: [Int32: [(text: [Unicode.Scalar], intent: IntentID)]]] = [:]
  /// Per record and text field, the last text read back and what it was found to be (most steps
  /// show the same text again).
  @exclusivity(unchecked) var readBack: [RecordKey: [Int32: (shown: String, text: TextValue, writer: IntentID)]] = [:]
  /// The run's seed: each device's generator is drawn from it.
  @exclusivity(unchecked) var seed: UInt64 = 0
  /// Each record's type, by key (its first create's).
  @exclusivity(unchecked) var types: [Int32] = []
  /// Whether the app states its schema (and so carries out the schema's delete rules itself).
  @exclusivity(unchecked) var appStatesSchema = false
  /// The zones the apps of the run saved records in, by number (zone `n` is `zones[n - 1]`).
  @exclusivity(unchecked) var zones: [SyncRecordZoneID] = []
  /// The zone each record was last saved in, by number: fetched copies are in it.
  @exclusivity(unchecked) var zoneOf: [RecordKey: Int32] = [:]
  /// Where the drivers log what the app did, when the run is checked for determinism.
  @exclusivity(unchecked) var behaviour: AppBehaviourLog?
  /// The records whose provenance may have changed, in the order of the changes (one record may
  /// be there many times): what a record's provenance is found from (``written``, ``creators``,
  /// ``creatorDevices``, ``recreated``, ``pieces``) is changed only through the methods below,
  /// which note the record here. A driver keeps its records with their provenance and makes
  /// again those noted since it last looked.
  @exclusivity(unchecked) private(set) var touched: [RecordKey] = []
  /// Counts the changes that may alter any record's provenance: an intent's incarnation
  /// (``incarnations``, ``incarnationDevices``) written over. (A new intent's is set before
  /// anything it wrote is noted, so it changes no record's provenance found before.) A driver
  /// makes all its records again when it moved.
  @exclusivity(unchecked) private(set) var generation: UInt64 = 0

  /// Notes that `intent` wrote `value` into a field of `key`.
  func wrote(_ value: Value, to field: Int32, of key: RecordKey, by intent: IntentID) {
    written[key, default: []].append((field, value, intent))
    touched.append(key)
  }

  /// Notes that `intent`, made on `device`, created `key` (again, if it had a creator).
  func created(_ key: RecordKey, by intent: IntentID, on device: Int32) {
    if creators[key] != nil { recreated.insert(key) }
    creators[key] = intent
    creatorDevices[key] = device
    setIncarnationDevice(of: intent, device)
    touched.append(key)
  }

  /// The incarnation `intent` was made on (the create that made it).
  func setIncarnation(of intent: IntentID, _ creator: IntentID?) {
    if let old = incarnations[intent], old != creator { generation &+= 1 }
    incarnations[intent] = creator
  }

  /// The device of the create `intent`.
  func setIncarnationDevice(of intent: IntentID, _ device: Int32) {
    if let old = incarnationDevices[intent], old != device { generation &+= 1 }
    incarnationDevices[intent] = device
  }
  package init() {}

  /// The number of a zone (from 1), given it on first use.
  func zoneNumber(_ zone: SyncRecordZoneID) -> Int32 {
    if let i = zones.firstIndex(of: zone) { return Int32(i + 1) }
    zones.append(zone)
    return Int32(zones.count)
  }

  /// The zone of number `n` (nil for 0 or an unknown number).
  func zone(_ n: Int32) -> SyncRecordZoneID? { n >= 1 && Int(n) <= zones.count ? zones[Int(n) - 1] : nil }

  /// Notes that `intent` wrote `text` into a text field.
  func wrote(_ text: String, to field: Int32, of key: RecordKey, by intent: IntentID) {
    guard !text.isEmpty else { return }
    pieces[key, default: [:]][field, default: []].append((Array(text.unicodeScalars), intent))
    readBack[key]?[field] = nil
    touched.append(key)
  }

  /// A text field as an app shows it, with each character's provenance: read left to right, the
  /// longest piece an intent wrote that starts here is that intent's (its characters numbered
  /// from 0, as the intent inserted them); a character no piece explains is nobody's (intent 0,
  /// numbered on so that no two share an id). A piece shown twice is an append applied twice,
  /// which the oracle reports. Also returns the last intent found (the field's writer).
  func text(_ shown: String, field: Int32, of key: RecordKey) -> (TextValue, IntentID) {
    if let last = readBack[key]?[field], last.shown == shown { return (last.text, last.writer) }
    let known = pieces[key]?[field] ?? []
    let scalars = Array(shown.unicodeScalars)
    var text = TextValue()
    var writer: IntentID = 0
    var stray = String.UnicodeScalarView()
    var strayOffset: Int32 = 0
    func flushStray() {
      guard !stray.isEmpty else { return }
      text.append(String(stray), by: 0, firstOffset: strayOffset)
      strayOffset += Int32(stray.count)
      stray = String.UnicodeScalarView()
    }
    var i = 0
    while i < scalars.count {
      var best = -1
      for (p, piece) in known.enumerated() where piece.text.count <= scalars.count - i && (best < 0 || piece.text.count > known[best].text.count) {
        if scalars[i..<i + piece.text.count].elementsEqual(piece.text) { best = p }
      }
      if best < 0 {
        stray.append(scalars[i])
        i += 1
        continue
      }
      flushStray()
      var piece = String.UnicodeScalarView()
      piece.append(contentsOf: known[best].text)
      text.append(String(piece), by: known[best].intent)
      writer = known[best].intent
      i += known[best].text.count
    }
    flushStray()
    readBack[key, default: [:]][field] = (shown, text, writer)
    return (text, writer)
  }
}
