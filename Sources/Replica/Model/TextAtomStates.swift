/// Where each character of a text is: for every id among its atoms, the intent that removed it
/// (0: visible), and the visible atoms whose id an earlier atom already has. Exactly what a
/// dictionary filled in document order says (`states[id] = deletedBy`, the last atom with an id
/// winning), built without hashing every character: for a text that edits made (each intent's
/// characters numbered from 0, intents numbered densely) a column of removals per intent,
/// indexed by offset; for any other, that dictionary.
package struct TextAtomStates {
  /// By intent: its column in `columns`, or -1.
  private var columnOf: [Int] = []
  /// By column, by offset: the removal of the last atom with that id, or nil.
  private var columns: [[IntentID?]] = []
  /// The dictionary, for texts whose ids do not fit columns; then the columns are empty.
  private var byID: [AtomID: IntentID]?

  /// The ids of the visible atoms that repeat an earlier atom's id, in document order (an insert
  /// applied more than once).
  package private(set) var duplicates: [AtomID] = []

  /// The states of `text`'s atoms.
  ///
  /// - Complexity: O(n + i), n atoms, i the largest intent among them, when it fits columns;
  ///   else O(n) hashed.
  package init(_ text: TextValue) {
    if !_fillColumns(text.atoms) {
      columnOf = []
      columns = []
      duplicates = []
      var byID: [AtomID: IntentID] = [:]
      byID.reserveCapacity(text.atoms.count)
      for a in text.atoms {
        if byID[a.id] != nil, a.isVisible { duplicates.append(a.id) }
        byID[a.id] = a.deletedBy
      }
      self.byID = byID
    }
  }

  /// Fills the columns, or returns false when an id does not fit them: a negative intent or
  /// offset, or more room than a few times the atoms.
  private mutating func _fillColumns(_ atoms: [TextAtom]) -> Bool {
    let room = 2 * atoms.count + 1_024
    var largest: IntentID = 0
    for a in atoms {
      guard a.id.intent >= 0, a.id.offset >= 0, Int(a.id.intent) < room else { return false }
      largest = Swift.max(largest, a.id.intent)
    }
    columnOf = [Int](repeating: -1, count: atoms.isEmpty ? 0 : Int(largest) + 1)
    var slots = 0
    var intent: IntentID = -1
    var column = -1
    for a in atoms {
      if a.id.intent != intent {
        intent = a.id.intent
        column = columnOf[Int(intent)]
        if column < 0 {
          column = columns.count
          columnOf[Int(intent)] = column
          columns.append([])
        }
      }
      let offset = Int(a.id.offset)
      if offset >= columns[column].count {
        slots += offset + 1 - columns[column].count
        guard slots <= room else { return false }
        columns[column].append(contentsOf: repeatElement(nil, count: offset + 1 - columns[column].count))
      }
      if columns[column][offset] != nil, a.isVisible { duplicates.append(a.id) }
      columns[column][offset] = a.deletedBy
    }
    return true
  }

  /// Whether the states are kept in columns (for tests).
  var _inColumns: Bool { byID == nil }

  /// The removal of the last atom with this id (0: it is visible), or nil when no atom has it.
  package subscript(id: AtomID) -> IntentID? {
    if let byID { return byID[id] }
    guard id.intent >= 0, Int(id.intent) < columnOf.count, id.offset >= 0 else { return nil }
    let column = columnOf[Int(id.intent)]
    guard column >= 0, Int(id.offset) < columns[column].count else { return nil }
    return columns[column][Int(id.offset)]
  }
}
