/// A context's undo stack (Core Data's `NSUndoManager`, which Foundation on Linux does not fully provide):
/// groups of actions that undo changes, and the redo stack that undoing builds.
///
/// A context records one action for every change it sees: an attribute or relationship set, an insert, a
/// delete. With ``groupsByEvent`` (the default) the changes between two calls of
/// ``ManagedObjectContext/processPendingChanges()`` (which ``ManagedObjectContext/save()`` also makes) form
/// one group; ``beginUndoGrouping()`` and ``endUndoGrouping()`` make groups of your own, nested or not.
///
/// For example:
///
///     let undo = context.undoManager!
///     ada.salary = 200
///     try context.processPendingChanges()      // closes the group
///     undo.undo()                               // ada.salary is back to its old value
///     undo.redo()                               // and 200 again
///
/// The actions hold the objects they name strongly, as Core Data's do: an object changed and then
/// released stays alive while an action names it. ``removeAllActions()`` lets go of them all.
public final class ContextUndoManager {
    /// An action that reverts one change; undoing it registers its own reverse (the redo).
    typealias Action = () -> Void

    /// Closed groups, oldest first; each group's actions in the order they were registered.
    private var undoStack: [[Action]] = []
    private var redoStack: [[Action]] = []
    /// Open groups, outermost first.
    private var openGroups: [[Action]] = []
    /// While undoing or redoing, the group that collects the reverse actions.
    private var collecting: [Action]?
    private var disabledCount = 0

    /// The most groups kept for undo (the oldest are dropped first); 0 for no limit.
    public var levelsOfUndo = 0 {
        didSet { trim() }
    }
    /// Whether changes are grouped automatically, one group per event (between two
    /// ``ManagedObjectContext/processPendingChanges()``).
    public var groupsByEvent = true
    /// Whether an undo is running.
    public private(set) var isUndoing = false
    /// Whether a redo is running.
    public private(set) var isRedoing = false

    /// Makes an empty undo manager.
    public init() {}

    /// Whether there is a group to undo (an open automatic group counts once it holds an action).
    public var canUndo: Bool { !undoStack.isEmpty || openGroups.contains { !$0.isEmpty } }
    /// Whether there is a group to redo.
    public var canRedo: Bool { !redoStack.isEmpty }
    /// How deeply groups are nested now: 0 when none is open.
    public var groupingLevel: Int { openGroups.count }
    /// Whether changes are recorded (see ``disableUndoRegistration()``).
    public var isUndoRegistrationEnabled: Bool { disabledCount == 0 }

    /// Opens a group: the actions registered until the matching ``endUndoGrouping()`` undo together.
    public func beginUndoGrouping() {
        openGroups.append([])
    }

    /// Closes the innermost open group. A closed inner group becomes part of its outer group; a closed
    /// outermost group goes on the undo stack (unless it is empty).
    public func endUndoGrouping() {
        precondition(!openGroups.isEmpty, "endUndoGrouping() without beginUndoGrouping()")
        let group = openGroups.removeLast()
        if openGroups.isEmpty {
            guard !group.isEmpty else { return }
            undoStack.append(group)
            trim()
        } else {
            openGroups[openGroups.count - 1] += group
        }
    }

    /// Stops recording changes until a matching ``enableUndoRegistration()`` (calls nest).
    public func disableUndoRegistration() { disabledCount += 1 }

    /// Resumes recording changes after ``disableUndoRegistration()``.
    public func enableUndoRegistration() {
        precondition(disabledCount > 0, "enableUndoRegistration() without disableUndoRegistration()")
        disabledCount -= 1
    }

    /// Undoes the last group: runs its actions newest first; what they change is recorded as the group
    /// to redo. With ``groupsByEvent``, an open automatic group is closed first.
    public func undo() {
        closeAutomaticGroup()
        guard let group = undoStack.popLast() else { return }
        isUndoing = true
        let reverse = run(group)
        isUndoing = false
        if !reverse.isEmpty { redoStack.append(reverse) }
    }

    /// Redoes the last undone group; what it changes becomes undoable again.
    public func redo() {
        closeAutomaticGroup()
        guard let group = redoStack.popLast() else { return }
        isRedoing = true
        let reverse = run(group)
        isRedoing = false
        if !reverse.isEmpty {
            undoStack.append(reverse)
            trim()
        }
    }

    /// Forgets every action, releasing the objects they hold.
    public func removeAllActions() {
        undoStack = []
        redoStack = []
        openGroups = openGroups.map { _ in [] }
    }

    // MARK: - Recording (the context)

    /// Records an action that reverts a change. Outside undo and redo this starts an automatic group if
    /// none is open (with ``groupsByEvent``) and clears the redo stack, as a new change makes redo
    /// meaningless.
    func register(_ action: @escaping Action) {
        guard isUndoRegistrationEnabled else { return }
        if collecting != nil {
            collecting!.append(action)
            return
        }
        if openGroups.isEmpty {
            guard groupsByEvent else { return }
            openGroups.append([])
        }
        openGroups[openGroups.count - 1].append(action)
        redoStack = []
    }

    /// Closes the automatic group at the end of an event (``ManagedObjectContext/processPendingChanges()``).
    func closeAutomaticGroup() {
        guard groupsByEvent, openGroups.count == 1 else { return }
        endUndoGrouping()
    }

    /// Runs a group's actions newest first and returns the actions they registered.
    private func run(_ group: [Action]) -> [Action] {
        let outer = collecting
        collecting = []
        for action in group.reversed() { action() }
        let reverse = collecting ?? []
        collecting = outer
        return reverse
    }

    private func trim() {
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }
}

@available(*, unavailable, message: "an undo manager belongs to its context's thread")
extension ContextUndoManager: Sendable {}
