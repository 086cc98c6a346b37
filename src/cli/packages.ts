/**
 * Optional packages, loaded only by the commands that need them: PostgreSQL's (`pg`, `pg-boss`,
 * `@langchain/langgraph-checkpoint-postgres`) for `postgresql://` URLs, SQLite's for a file. A
 * missing one ends the command with the package to install and exit code 2, instead of a module
 * error from deep inside an import.
 */
import { CliError } from "./target-error.js";

/** Exit code for a package the command needs that is not installed. */
export const MISSING_PACKAGE_EXIT = 2;

/** A package the command needs is not installed: printed as is, exit code 2. */
export class MissingPackageError extends CliError {
  readonly exitCode = MISSING_PACKAGE_EXIT;
  constructor(
    readonly packageName: string,
    forWhat: string,
  ) {
    super(`${forWhat} needs the package "${packageName}", which is not installed: npm install ${packageName}`);
    this.name = "MissingPackageError";
  }
}

/** The package a module-not-found error names (the one missing may be a dependency of the one imported). */
function missingPackage(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code !== "ERR_MODULE_NOT_FOUND" || typeof message !== "string") return undefined;
  return /Cannot find (?:package|module) '((?:@[^/']+\/)?[^/']+)/.exec(message)?.[1];
}

/** Runs `load` (a dynamic import); a package it cannot find becomes a `MissingPackageError`. */
export async function loadPackage<T>(forWhat: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const name = missingPackage(error);
    if (name) throw new MissingPackageError(name, forWhat);
    throw error;
  }
}
