/**
 * The connection to `gmprep lsp`: starting it over stdio, explaining a failed start, typed custom requests,
 * and the server's notifications as VS Code events.
 */
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  TransportKind,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageclient/node";
import { diagnoseLaunch, findLaunchProblem } from "./diagnose.js";
import { readConfig, currentEnvironment } from "./settings.js";
import {
  type AnswerDelta,
  type AnswerSources,
  type IndexStateNotification,
  Methods,
} from "./shared/protocol.js";
import { buildInitializationOptions, configProblems, resolveServerLaunch } from "./shared/serverConfig.js";
import { errorMessage } from "./shared/errors.js";
import type { Requests } from "./shared/protocol.js";

export type WorkDoneProgressValue = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export type ClientState = "stopped" | "starting" | "running" | "failed";

/** Thrown by requests made while the server is not running. */
export class ServerNotRunningError extends Error {
  constructor() {
    super("The gmprep language server is not running.");
  }
}

export class GmprepClient implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | undefined;
  private stateValue: ClientState = "stopped";
  private lastFailure = "";
  private starting: Promise<boolean> | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ClientState>();
  private readonly deltaEmitter = new vscode.EventEmitter<AnswerDelta>();
  private readonly sourcesEmitter = new vscode.EventEmitter<AnswerSources>();
  private readonly indexEmitter = new vscode.EventEmitter<IndexStateNotification>();
  private readonly progressEmitter = new vscode.EventEmitter<WorkDoneProgressValue>();

  /** Fires on every state change (also after a restart). */
  readonly onDidChangeState = this.stateEmitter.event;
  /** gmprep/answerDelta: streamed answer text. */
  readonly onAnswerDelta = this.deltaEmitter.event;
  /** gmprep/answerSources: the numbered passages of the answer being made, before its first delta. */
  readonly onAnswerSources = this.sourcesEmitter.event;
  /** gmprep/indexState: index build progress. */
  readonly onIndexState = this.indexEmitter.event;
  /** Server-initiated work-done `$/progress` (index builds); VS Code also shows it in the window. */
  readonly onProgress = this.progressEmitter.event;

  constructor(private readonly onFailure: (reason: string) => void) {
    this.output = vscode.window.createOutputChannel("gmprep", { log: true });
  }

  get state(): ClientState {
    return this.stateValue;
  }

  /** Why the last start failed (empty when it did not). */
  get failure(): string {
    return this.lastFailure;
  }

  private setState(state: ClientState): void {
    this.stateValue = state;
    this.stateEmitter.fire(state);
  }

  /** Start the server; on failure, explain why through `onFailure` and resolve false. */
  start(): Promise<boolean> {
    // One start at a time: a settings change during a start must not spawn a second server.
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<boolean> {
    if (this.client !== undefined) return this.stateValue === "running";
    const cfg = readConfig();
    const env = currentEnvironment();
    const launch = resolveServerLaunch(cfg, env);
    const problems = configProblems(cfg);
    if (problems.length > 0) {
      void vscode.window.showWarningMessage(`gmprep: ${problems.join(" ")}`, "Open settings").then((pick) => {
        if (pick) void vscode.commands.executeCommand("workbench.action.openSettings", "gmprep.llm");
      });
    }
    this.output.appendLine(`Starting: ${launch.display} --stdio`);
    this.setState("starting");
    const problem = await findLaunchProblem(launch);
    if (problem !== null) {
      this.output.appendLine(`Cannot start: ${problem}`);
      this.fail(problem);
      return false;
    }
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      transport: TransportKind.stdio,
      options: env.workspaceFolder !== undefined ? { cwd: env.workspaceFolder } : {},
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { language: "markdown", scheme: "file" },
        { language: "markdown", scheme: "untitled" },
      ],
      initializationOptions: buildInitializationOptions(cfg, env),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      connectionOptions: { maxRestartCount: 3 },
      initializationFailedHandler: () => false,
      middleware: {
        handleWorkDoneProgress: (token, params, next) => {
          this.progressEmitter.fire(params);
          next(token, params);
        },
        workspace: {
          // workspace/configuration for section "gmprep" answers with the same cleaned options as
          // initializationOptions, so empty settings never override the workspace's gmprep.toml.
          configuration: (params, token, next) => {
            const fresh = buildInitializationOptions(readConfig(), currentEnvironment());
            const wanted = params.items.some((item) => item.section === "gmprep");
            if (!wanted) return next(params, token);
            return params.items.map((item) => (item.section === "gmprep" ? fresh : null));
          },
        },
      },
    };
    const client = new LanguageClient("gmprep", "gmprep", serverOptions, clientOptions);
    this.client = client;
    client.onNotification(Methods.answerSources, (p: AnswerSources) => this.sourcesEmitter.fire(p));
    client.onNotification(Methods.answerDelta, (p: AnswerDelta) => this.deltaEmitter.fire(p));
    client.onNotification(Methods.indexState, (p: IndexStateNotification) => this.indexEmitter.fire(p));
    client.onDidChangeState((e) => {
      // State 1 = Stopped, 2 = Running, 3 = Starting (vscode-languageclient's State enum).
      if (e.newState === 2) this.setState("running");
      else if (e.newState === 3) this.setState("starting");
      else if (this.stateValue === "running") this.setState("stopped");
    });
    try {
      await client.start();
      this.lastFailure = "";
      this.setState("running");
      return true;
    } catch (error) {
      this.client = undefined;
      const message = errorMessage(error);
      this.output.appendLine(`Start failed: ${message}`);
      const reason = await diagnoseLaunch(launch, `The server command "${launch.display}" failed: ${message}`);
      try {
        await client.dispose(2000);
      } catch {
        // Already gone: the process never came up.
      }
      this.fail(reason);
      return false;
    }
  }

  private fail(reason: string): void {
    this.lastFailure = reason;
    this.setState("failed");
    this.onFailure(reason);
  }

  /** Stop and start again (new settings, a rebuilt install). */
  async restart(): Promise<boolean> {
    await this.stop();
    return this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`Stop: ${errorMessage(error)}`);
      }
    }
    this.setState("stopped");
  }

  /** Send a gmprep custom request (its params and result types come from the generated protocol);
   * rejects with ServerNotRunningError when there is no server. */
  async request<M extends keyof Requests>(
    method: M,
    params: Requests[M]["params"],
    token?: vscode.CancellationToken,
  ): Promise<Requests[M]["result"]> {
    return this.send<Requests[M]["result"]>(method, params, token);
  }

  private async send<R>(method: string, params: object, token?: vscode.CancellationToken): Promise<R> {
    const client = this.client;
    if (client === undefined || this.stateValue !== "running") throw new ServerNotRunningError();
    return token !== undefined ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  /** Run one of the server's commands (workspace/executeCommand). */
  async executeServerCommand(command: string, args: unknown[]): Promise<unknown> {
    return this.send(ExecuteCommandRequest.method, { command, arguments: args });
  }

  /** Push changed settings to a running server. */
  async notifyConfigurationChanged(): Promise<void> {
    const client = this.client;
    if (client === undefined || this.stateValue !== "running") return;
    const settings = { gmprep: buildInitializationOptions(readConfig(), currentEnvironment()) };
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings });
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.deltaEmitter.dispose();
    this.sourcesEmitter.dispose();
    this.indexEmitter.dispose();
    this.progressEmitter.dispose();
    this.output.dispose();
  }
}
