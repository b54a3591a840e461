"""The gmprep language server: a pygls ``LanguageServer`` and its handler registrations.

Handlers stay thin: they translate LSP to calls into ``gmprep.server.*`` feature modules, which in
turn read the knowledge graph (kg) and the core services. Startup is staged (see state.py):
name index from the bundled corpus first, then the store check/build in the background.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from gmprep.common import __version__
from gmprep.common.settings import LoadedSettings, Settings, add_ignore_word, resolve_settings, settings_error
from gmprep.server import actions, encounters, models, requests, statblocks
from gmprep.server.ask import Worker
from gmprep.server.builders import Builders
from gmprep.server.completion import complete
from gmprep.server.creators import Creators
from gmprep.server.definition import definition
from gmprep.server.diagnostics import legacy_diagnostics
from gmprep.server.documents import DocumentMentions
from gmprep.server.entries import EntryFiles
from gmprep.server.hover import hover
from gmprep.server.indexing import IndexRunner
from gmprep.server.protocol import GmprepProtocol
from gmprep.server.state import IndexStatus, ServerState

log = logging.getLogger(__name__)

CONFIG_SECTION = "gmprep"
DEBOUNCE_CHARS = 32_000  # notes larger than this publish their hints once typing pauses ...
DEBOUNCE_S = 0.3  # ... for this long


class GmprepServer(LanguageServer):
    """The language server with its state, background index runner and answer worker."""

    def __init__(self, settings: Settings | None = None, build_index: bool = True):
        super().__init__(
            "gmprep", __version__, protocol_cls=GmprepProtocol,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
        )
        self.base_settings = settings
        self.auto_build = build_index
        self.state = ServerState(settings or Settings())
        # a note's mentions changed without an edit (the context model's first reading landed): republish
        self.state.docs.on_update = lambda uri: self.call_soon(lambda: self._publish_now(uri))
        self.entries = EntryFiles(self.state, on_error=self._report_error)
        self.indexer = IndexRunner(self, self.state)
        self.worker = Worker()
        self.creators = Creators(self.state)
        self.builders = Builders(self.creators)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.init_options: dict = {}
        self.last_options: dict = {}  # the client's latest settings (workspace/configuration)
        self._debounce: dict[str, asyncio.TimerHandle] = {}
        self._last_state: str | None = None
        self._warm = False
        self._told_ignored: set[str] = set()  # workspace keys the user was told were ignored
        self.state.on_status = self._status_changed

    # ---- lifecycle --------------------------------------------------------------------------
    def configure(self, root: Path | None, options: dict | None) -> None:
        """Settings from the user config, the workspace TOML files (under the trust policy of
        ``gmprep.common.settings``), then the client's options; ignored workspace keys are told
        to the user once."""
        self.state.workspace_root = root
        loaded = resolve_settings(root, None)
        self._tell_ignored(loaded)
        base = loaded.settings
        if self.base_settings is not None:
            base = base.merged(self.base_settings.model_dump(exclude_defaults=True, mode="json"))
        settings = base.merged(options or None)
        # the editor's never-hover words add to the workspace file's (which the code action writes), not replace them
        kept = [w for w in base.hover.ignore_words if w not in settings.hover.ignore_words]
        if kept:
            settings = settings.merged({"hover": {"ignore_words": [*settings.hover.ignore_words, *kept]}})
        if root is not None and not Path(settings.store_dir).is_absolute():
            settings = settings.merged({"store_dir": str(root / settings.store_dir)})
        self.state.settings = settings

    def _tell_ignored(self, loaded: LoadedSettings) -> None:
        for problem in loaded.problems:  # a settings file left out: said once, in one line
            self.tell_settings_problem(problem)
        fresh = {i.key for i in loaded.ignored} - self._told_ignored
        message = loaded.ignored_message()
        if not fresh or message is None:
            return
        self._told_ignored |= fresh
        log.warning("%s", message)
        params = lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=message)
        self.call_soon(lambda: self.window_show_message(params))

    def tell_settings_problem(self, problem: str) -> None:
        """Show a settings problem to the user once (a window message, one line); the server goes on
        with the settings it could use."""
        if problem in self._told_ignored:
            return
        self._told_ignored.add(problem)
        log.warning("gmprep settings: %s", problem)
        params = lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"gmprep settings: {problem}")
        self.call_soon(lambda: self.window_show_message(params))

    def start_index(self, force: bool = False) -> bool:
        """Check (and if needed and allowed, build) the index in the background."""
        if force:
            self.entries.stop()
        return self.indexer.start(force=force, build=self.auto_build)

    def _status_changed(self, status: IndexStatus) -> None:
        payload = models.IndexStateNotification(
            state=status.state, message=status.message, percentage=status.percentage
        ).wire()
        self.call_soon(lambda: self.protocol.notify("gmprep/indexState", payload))
        if status.names_ready and not self._warm:
            self._warm = True
            self.call_soon(self.warm_up)
            # the creature resolver (a second of name variants) is built off the event loop
            threading.Thread(target=_guard(self._creatures_ready), name="gmprep-creatures", daemon=True).start()
        if status.state == "ready" and status.state != self._last_state:
            self.entries.start_background()
        self._last_state = status.state

    def _creatures_ready(self) -> None:
        """Build the creature resolver, then ask the editor to re-request inlay hints and code lenses:
        a note opened while the rules were still loading shows "still loading" until it asks again."""
        self.creators.resolver()
        self.call_soon(self._refresh_creators)

    def _refresh_creators(self) -> None:
        ws = self.client_capabilities.workspace if self.client_capabilities else None
        if ws and ws.inlay_hint and ws.inlay_hint.refresh_support:
            self.workspace_inlay_hint_refresh(None)
        if ws and ws.code_lens and ws.code_lens.refresh_support:
            self.workspace_code_lens_refresh(None)

    def _report_error(self, message: str) -> None:
        """A background failure the user should see in the editor's gmprep log (from any thread)."""
        params = lsp.LogMessageParams(type=lsp.MessageType.Error, message=f"gmprep: {message}")
        self.call_soon(lambda: self.window_log_message(params))

    def warm_up(self) -> None:
        """Serialize one of each result type once: cattrs builds its (un)structure functions on first
        use, which would otherwise land on the user's first hover (tens of milliseconds)."""
        book = self.state.book
        if book is None:
            return
        from gmprep.server.documents import scan

        doc = scan("untitled:warm-up", 0, "The troll is frightened 2 and flat-footed.", book.names)
        pos = lsp.Position(line=0, character=15)
        samples: list[Any] = [
            hover(self.state, self.entries, doc, pos),
            complete(book, doc, lsp.Position(line=0, character=9)),
            actions.code_actions(
                self.state, doc,
                lsp.CodeActionParams(
                    text_document=lsp.TextDocumentIdentifier(uri=doc.uri), range=lsp.Range(start=pos, end=pos),
                    context=lsp.CodeActionContext(diagnostics=legacy_diagnostics(doc)),
                ),
            ),
            lsp.Location(uri=doc.uri, range=lsp.Range(start=pos, end=pos)),
            lsp.PublishDiagnosticsParams(uri=doc.uri, diagnostics=legacy_diagnostics(doc)),
        ]
        samples += [  # the shapes of the creators' results
            lsp.InlayHint(position=pos, label="10 XP", kind=lsp.InlayHintKind.Type, padding_left=True),
            lsp.CodeLens(range=lsp.Range(start=pos, end=pos), command=lsp.Command(title="", command="")),
        ]
        converter = self.protocol._converter
        for sample in samples:
            converter.unstructure(sample)

    def call_soon(self, fn) -> None:
        """Run ``fn`` on the server's event loop (from any thread)."""
        loop = self.loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(_guard(fn))

    # ---- documents --------------------------------------------------------------------------
    def document(self, uri: str) -> DocumentMentions:
        """The mentions of the current version of an open (or on-disk) document, scanned in this
        thread if need be (commands; the LSP features use ``document_async``)."""
        names = self.state.names
        if names is None:
            book = self.state.wait_book()
            names = book.names if book else None
        doc = self.text_document(uri)
        return self.state.docs.get(uri, doc.version, doc.source, names, self.state.settings.hover)

    async def document_async(self, uri: str) -> DocumentMentions:
        """The mentions of the current version, without scanning on the event loop: a cached
        version answers at once; otherwise the scan worker's result is awaited (hovers on other
        files are never queued behind a big note's rescan)."""
        names = self.state.names
        if names is None:  # still loading (startup): wait for it off the loop, as document() does
            book = await asyncio.get_running_loop().run_in_executor(None, self.state.wait_book)
            names = book.names if book else None
        doc = self.text_document(uri)
        cached = self.state.docs.cached(uri, doc.version, doc.source)
        if cached is not None:
            return cached
        fut = self.state.docs.submit(uri, doc.version, doc.source, names, self.state.settings.hover)
        return await asyncio.wrap_future(fut)

    def text_document(self, uri: str):
        """The open (or on-disk) document; a clear error for one that is neither."""
        if uri not in self.workspace.text_documents:
            # pygls would read the file lazily and fail with a traceback; say what is wrong instead
            fs = to_fs_path(uri) if uri.startswith("file:") else None
            if fs is None or not Path(fs).is_file():
                raise requests.failed(f"{uri} is not open in the editor (open it first)")
        return self.workspace.get_text_document(uri)

    def creators_note(self, uri: str):
        """The creators' analysis (encounters, statblocks) of the current version of a document."""
        doc = self.text_document(uri)
        return self.creators.analyse(uri, doc.version, doc.source)

    def publish(self, uri: str) -> None:
        """Rescan a document on the worker thread, then publish its legacy-name hints. A big note
        being typed into is rescanned once typing pauses (its own hovers rescan at once)."""
        loop = self.loop
        try:
            size = len(self.workspace.get_text_document(uri).source)
        except Exception:
            size = 0
        if size > DEBOUNCE_CHARS and loop is not None and not loop.is_closed():
            old = self._debounce.pop(uri, None)
            if old is not None:
                old.cancel()
            self._debounce[uri] = loop.call_later(DEBOUNCE_S, _guard(lambda: self._publish_now(uri)))
            return
        self._publish_now(uri)

    def _publish_now(self, uri: str) -> None:
        self._debounce.pop(uri, None)
        if self.state.names is None:  # still loading: publish once the names are there
            def later() -> None:
                if self.state.wait_book() is not None:
                    self.call_soon(lambda: self._publish_now(uri))

            threading.Thread(target=later, name="gmprep-publish-wait", daemon=True).start()
            return
        try:
            doc = self.workspace.get_text_document(uri)
            names = self.state.names
            fut = self.state.docs.submit(uri, doc.version, doc.source, names, self.state.settings.hover)
        except Exception:
            log.exception("scanning %s failed", uri)
            return
        fut.add_done_callback(lambda f: self.call_soon(lambda: self._publish_done(uri, f)))

    def _publish_done(self, uri: str, fut) -> None:
        if fut.exception() is not None:
            return
        doc = fut.result()
        current = self.workspace.text_documents.get(uri)
        if current is not None and current.version != doc.version:
            return  # a newer version is on its way
        if doc.skipped:
            log.info("%s: not scanned (%s)", uri, doc.skipped)
        diagnostics = legacy_diagnostics(doc)
        try:
            note = self.creators.analyse(uri, doc.version, doc.text)
            diagnostics += encounters.diagnostics(note) + statblocks.diagnostics(note)
        except Exception:  # the creators must never cost the note its other diagnostics
            log.exception("creators analysis of %s failed", uri)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics)
        )


def _guard(fn):
    def run() -> None:
        try:
            fn()
        except Exception:
            log.exception("callback failed")

    return run


def _root_of(params: lsp.InitializeParams) -> Path | None:
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    uri = uri or params.root_uri
    if uri:
        fs = to_fs_path(uri)
        return Path(fs) if fs else None
    return Path(params.root_path) if params.root_path else None


def create_server(settings: Settings | None = None, build_index: bool = True) -> GmprepServer:
    """A server with every handler registered."""
    # The scan worker thread holds the GIL while a big note is parsed; a 1 ms switch interval
    # (default 5 ms) lets the event loop answer a hover on another file without waiting a slice.
    sys.setswitchinterval(0.001)
    server = GmprepServer(settings, build_index)

    @server.feature(lsp.INITIALIZE)
    def on_initialize(ls: GmprepServer, params: lsp.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop() if _loop_running() else asyncio.get_event_loop()
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.init_options = options
        try:
            ls.configure(_root_of(params), options)
        except Exception as exc:  # a bad option must not keep the editor from starting
            ls.tell_settings_problem(f"{settings_error(exc)} (the editor's gmprep options are not used)")
            ls.configure(_root_of(params), None)
        threading.Thread(target=ls.state.load_book, name="gmprep-names", daemon=True).start()

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(ls: GmprepServer, params: lsp.InitializedParams) -> None:
        await _pull_configuration(ls)
        ls.start_index()

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: GmprepServer, params: Any) -> None:
        ls.entries.stop()
        ls.worker.stop()
        ls.state.shutdown()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_config(ls: GmprepServer, params: lsp.DidChangeConfigurationParams) -> None:
        settings = params.settings.get(CONFIG_SECTION) if isinstance(params.settings, dict) else None
        if settings:
            _apply_settings(ls, settings)
        else:
            await _pull_configuration(ls)

    # ---- documents ------------------------------------------------------------------------
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GmprepServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GmprepServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GmprepServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.state.docs.drop(params.text_document.uri)
        ls.creators.drop(params.text_document.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.TextDocumentSaveRegistrationOptions(include_text=False))
    def did_save(ls: GmprepServer, params: lsp.DidSaveTextDocumentParams) -> None:
        fs = to_fs_path(params.text_document.uri)
        if fs:
            ls.indexer.index_saved_note(Path(fs))

    @server.feature(
        lsp.WORKSPACE_DID_RENAME_FILES,
        lsp.FileOperationRegistrationOptions(
            filters=[lsp.FileOperationFilter(pattern=lsp.FileOperationPattern(glob="**/*"))]
        ),
    )
    def did_rename(ls: GmprepServer, params: lsp.RenameFilesParams) -> None:
        store = ls.state.conversations()
        for f in params.files:
            moved = store.rename_path(ls.state.relpath(f.old_uri), ls.state.relpath(f.new_uri))
            if moved:
                log.info("moved %d conversations from %s to %s", moved, f.old_uri, f.new_uri)

    # ---- language features ----------------------------------------------------------------
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: GmprepServer, params: lsp.HoverParams) -> lsp.Hover | None:
        found = hover(ls.state, ls.entries, await ls.document_async(params.text_document.uri), params.position)
        if found is None:  # not on a rule name: on an encounter block, its arithmetic
            found = encounters.hover(ls.creators_note(params.text_document.uri), params.position)
        return found

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    def on_inlay_hint(ls: GmprepServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        return encounters.inlay_hints(ls.creators_note(params.text_document.uri), params.range)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    def on_code_lens(ls: GmprepServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        return encounters.code_lenses(ls.creators_note(params.text_document.uri))

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(resolve_provider=False))
    async def on_completion(ls: GmprepServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        doc = await ls.document_async(params.text_document.uri)
        return complete(ls.state.book, doc, params.position)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite]
        ),
    )
    async def on_code_action(ls: GmprepServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction | lsp.Command]:
        out = actions.code_actions(ls.state, await ls.document_async(params.text_document.uri), params)
        try:
            note = ls.creators_note(params.text_document.uri)
            made = encounters.quick_fixes(note, params) + statblocks.quick_fixes(note, params)
            made += ls.builders.actions(note, params.range)
        except Exception:
            log.exception("creators code actions failed")
            made = []
        only = params.context.only if params.context else None
        if only:
            made = [a for a in made if a.kind and any(str(a.kind).startswith(str(k)) for k in only)]
        return made + out

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: GmprepServer, params: lsp.DefinitionParams) -> lsp.Location | None:
        return definition(ls.entries, await ls.document_async(params.text_document.uri), params.position)

    # ---- commands -------------------------------------------------------------------------
    @server.command(models.INSERT_RULE_TEXT)
    async def cmd_insert(ls: GmprepServer, uri: str, line: int, character: int) -> dict:
        doc = ls.document(uri)
        mention = doc.at(lsp.Position(line=int(line), character=int(character)))
        if mention is None:
            raise requests.failed("no rules entry is named at that position")
        edit = actions.insert_rule_edit(ls.state, doc, mention)
        if edit is None:
            other = ls.state.other_entry(mention.node_id)
            if other is not None:  # a name of a book gmprep does not hold: there is no text to insert
                raise requests.failed(f"{other.name} is from {other.book}, which gmprep does not hold: no rule text")
            raise requests.failed(f"entry {mention.node_id} is not available")
        result = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="Insert rule text"))
        return models.AppliedResult(applied=bool(result and result.applied)).wire()

    @server.command(models.REPLACE_LEGACY_NAME)
    async def cmd_replace(ls: GmprepServer, uri: str, rng: lsp.Range, new_name: str) -> dict:
        doc = ls.document(uri)
        edit = actions.replace_legacy_edit(doc, rng, new_name)
        result = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="Replace legacy name"))
        return models.AppliedResult(applied=bool(result and result.applied)).wire()

    @server.command(models.IGNORE_WORD)
    def cmd_ignore_word(ls: GmprepServer, word: str) -> dict:
        root = ls.state.workspace_root
        if root is None:
            raise requests.failed("open a folder first: the word is kept in its gmprep.toml")
        try:
            path = add_ignore_word(root, str(word))
        except (OSError, ValueError) as exc:
            raise requests.failed(f"could not update gmprep.toml: {exc}") from None
        _apply_settings(ls, ls.last_options)  # re-read gmprep.toml; open notes are rescanned
        return models.IgnoredWordResult(file=str(path), ignored=str(word)).wire()

    @server.command(models.REBUILD_INDEX)
    def cmd_rebuild(ls: GmprepServer, *args) -> dict:
        return models.StartedResult(started=ls.start_index(force=True)).wire()

    # ---- custom requests --------------------------------------------------------------------
    simple = {
        "gmprep/status": requests.status,
        "gmprep/entry": requests.entry,
        "gmprep/conversations": requests.conversations,
        "gmprep/conversation": requests.conversation,
        "gmprep/conversation/new": requests.conversation_new,
        "gmprep/conversation/delete": requests.conversation_delete,
        "gmprep/conversation/export": requests.conversation_export,
        "gmprep/trace": requests.trace,
        "gmprep/index/rebuild": requests.rebuild,
    }
    for method, fn in simple.items():
        server.feature(method)(_sync_request(fn))
    server.feature("gmprep/search")(_async_request(requests.search))
    server.feature("gmprep/ask")(_async_request(requests.ask))
    return server


def _failure(fn, exc: Exception) -> JsonRpcException:
    """The one-line error a client gets when a custom request fails unexpectedly (traceback logged)."""
    log.exception("%s failed", fn.__name__)
    if isinstance(exc, UnicodeError):  # JSON can carry lone surrogates; SQLite and UTF-8 cannot
        return requests.failed(f"{fn.__name__} failed: the text contains invalid Unicode (a lone surrogate)")
    return requests.failed(f"{fn.__name__} failed: {exc}")


def _sync_request(fn):
    def handler(ls: GmprepServer, params: Any):
        try:
            return fn(ls, params)
        except JsonRpcException:
            raise
        except Exception as exc:
            raise _failure(fn, exc) from None

    handler.__name__ = fn.__name__
    return handler


def _async_request(fn):
    async def handler(ls: GmprepServer, params: Any):
        try:
            return await fn(ls, params)
        except (JsonRpcException, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise _failure(fn, exc) from None

    handler.__name__ = fn.__name__
    return handler


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


def _apply_settings(ls: GmprepServer, options: dict) -> None:
    old = ls.state.settings
    merged = {**ls.init_options, **options}
    ls.last_options = options
    try:
        ls.configure(ls.state.workspace_root, merged)
    except Exception as exc:
        ls.tell_settings_problem(f"{settings_error(exc)} (the change is not used)")
        ls.state.settings = old
        return
    if ls.state.settings.hover.other_books != old.hover.other_books and ls.state.book is not None:
        # the names the index holds change: load it again (it clears the scans when ready)
        threading.Thread(target=ls.state.load_book, name="gmprep-names", daemon=True).start()
    if ls.state.settings.hover != old.hover:  # ignore words or strictness changed: rescan what is open
        ls.state.docs.clear()
        for uri in list(ls.workspace.text_documents):
            ls.publish(uri)
    if Path(ls.state.settings.store_dir) != Path(old.store_dir):
        ls.state.retire_store()
        ls.state.set_status(state="empty", message="store folder changed", percentage=None)
        ls.start_index()


async def _pull_configuration(ls: GmprepServer) -> None:
    caps = ls.client_capabilities
    if not (caps and caps.workspace and caps.workspace.configuration):
        return
    try:
        result = await asyncio.wait_for(
            ls.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=CONFIG_SECTION)])
            ),
            timeout=5,
        )
    except Exception as exc:
        log.info("workspace/configuration unavailable: %s", exc)
        return
    options = result[0] if result else None
    if isinstance(options, dict) and options:
        _apply_settings(ls, options)
    elif options is not None and hasattr(options, "_asdict"):
        _apply_settings(ls, _plain(options))


def _plain(obj):
    if hasattr(obj, "_asdict"):
        return {k: _plain(v) for k, v in obj._asdict().items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


def main() -> int:
    """Serve LSP on stdin/stdout until the client exits."""
    server = create_server()
    server.start_io()
    return 0
