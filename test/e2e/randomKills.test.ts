// A few random kills of the daemon during chatty runs, in every test run (test/helpers/randomKills.ts;
// `npm run test:long` runs 200).
import { randomKills } from '../helpers/randomKills';

randomKills(8);
