// 200 random kills of the daemon during chatty runs (long; `npm run test:long`): test/helpers/randomKills.ts.
import { randomKills } from '../helpers/randomKills';

randomKills(200);
