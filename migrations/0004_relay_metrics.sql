CREATE TABLE `relay_counters` (
	`hour` integer NOT NULL,
	`name` text NOT NULL,
	`value` integer NOT NULL,
	PRIMARY KEY(`hour`, `name`)
);
--> statement-breakpoint
CREATE TABLE `relay_sockets` (
	`object_id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`sockets` integer NOT NULL,
	`expires_at` integer NOT NULL
);
