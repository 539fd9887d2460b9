// Training and evaluation: tournaments, statistics, reports.
export * from './stats.js';
export * from './tournament.js';
export * from './eval-report.js';
export * from './svg.js';
export * from './progress.js';
export * from './files.js';
