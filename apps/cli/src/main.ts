import { errorMessage } from '@relaygram/contracts';
import { buildProgram } from './program';

buildProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    process.stderr.write(`relaygram: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  });
